import { pino } from 'pino'
import { type ClickHouseHandle, openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { toRow } from '../../services/shared/clickhouse/request-table.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { SCHEMAS_DIR } from '../../services/shared/engines.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { migrateClickHouse } from '../../services/shared/migrate.ts'
import { clickhouseEnv } from './harness.ts'

const silent = pino({ level: 'silent' })

/** This test file's ClickHouse database, migrated, without the rest of Tally. */
export async function openMigratedClickHouse(): Promise<ClickHouseHandle> {
  const ch = await openClickHouse(loadConfig(clickhouseEnv()), silent)
  await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, silent)
  return ch
}

export async function insertEvents(ch: ClickHouseHandle, events: RequestEvent[]): Promise<void> {
  await ch.client.insert({ table: 'request_response_rmt', values: events.map(toRow), format: 'JSONEachRow' })
}

/** Request ids of one organization matching a compiled condition, sorted. */
export async function matchingIds(
  ch: ClickHouseHandle,
  organizationId: string,
  compiled: { sql: string; params: Record<string, unknown> },
): Promise<string[]> {
  const rs = await ch.client.query({
    query: `SELECT toString(request_id) AS id FROM request_response_rmt FINAL
            WHERE organization_id = {org:UUID} AND (${compiled.sql}) ORDER BY id`,
    query_params: { ...compiled.params, org: organizationId },
    format: 'JSONEachRow',
  })
  return (await rs.json<{ id: string }>()).map((r) => r.id)
}
