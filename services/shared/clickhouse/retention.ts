import type { Logger } from '../logger.ts'
import type { ClickHouseClient } from './client.ts'
import type { ClickHouseLayout } from './cluster-ddl.ts'
import { INSERTS_TABLE, ROLLUP_TABLE } from './request-hours.ts'
import { REQUEST_TABLE } from './request-table.ts'

/**
 * The tables a request lives in, each with the time its retention counts from: the request itself
 * (its created_at) and what is derived from it per hour (sessions' hours, the metrics rollup and
 * its insert counts), so that nothing about an expired request outlives it by more than an hour.
 */
const RETAINED: readonly { table: string; time: string }[] = [
  { table: REQUEST_TABLE, time: 'toDateTime(request_created_at)' },
  { table: 'session_hours', time: 'hour' },
  { table: ROLLUP_TABLE, time: 'hour' },
  { table: INSERTS_TABLE, time: 'hour' },
]

/** The TTL clause ClickHouse reports in a table's `engine_full`, without spaces; '' when none. */
function ttlOf(engineFull: string): string {
  const clause = /\bTTL\s+(.+?)(?:\s+SETTINGS\s|$)/.exec(engineFull)?.[1] ?? ''
  return clause.replace(/\s+/g, '')
}

/**
 * Makes ClickHouse keep requests `days` days from their created_at (TTL on each table of
 * RETAINED, rows deleted in the engine's merges; existing parts are brought under it by the
 * mutation ClickHouse starts for a changed TTL), or for good when `days` is undefined (the TTL
 * removed). Changes only what differs, so every process may call it at each start. Not on a
 * cluster yet: its tables are per node, and a TTL set on some nodes and not others would keep
 * one shard's requests longer than another's.
 */
export async function applyRetention(
  client: ClickHouseClient,
  layout: ClickHouseLayout,
  days: number | undefined,
  log: Logger,
): Promise<void> {
  if (layout.kind === 'cluster' && days !== undefined)
    throw new Error(
      'TALLY_RETENTION_DAYS is not supported with TALLY_CLICKHOUSE_CLUSTER yet: set a TTL on every node’s tables (docs/operations.md "Retention") and leave it unset',
    )
  if (layout.kind === 'cluster') return
  const found = await (
    await client.query({
      query:
        'SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND has({tables:Array(String)}, name)',
      query_params: { tables: RETAINED.map((r) => r.table) },
      format: 'JSONEachRow',
    })
  ).json<{ name: string; engine_full: string }>()
  for (const { table, time } of RETAINED) {
    const current = ttlOf(found.find((t) => t.name === table)?.engine_full ?? '')
    const wanted = days === undefined ? '' : `${time} + toIntervalDay(${days})`
    if (current === wanted.replace(/\s+/g, '')) continue
    // The table names and the expression are Tally's own; `days` is a validated integer.
    if (wanted) {
      await client.command({ query: `ALTER TABLE ${table} MODIFY TTL ${wanted}` })
      log.info({ table, days, was: current || undefined }, 'clickhouse_retention_set')
    } else {
      await client.command({ query: `ALTER TABLE ${table} REMOVE TTL` })
      log.info({ table, was: current }, 'clickhouse_retention_removed')
    }
  }
}
