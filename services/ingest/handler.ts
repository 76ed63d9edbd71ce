import type { ClickHouseClient } from '../shared/clickhouse.ts'
import type { RequestEvent } from '../shared/events/request-event.ts'
import type { EventHandler } from '../shared/events/transport.ts'
import type { Logger } from '../shared/logger.ts'
import { toRow } from './rows.ts'

export const REQUEST_TABLE = 'request_response_rmt'

/**
 * Writes each batch to request_response_rmt in one insert. A re-ingested request has the same
 * sorting key, so ReplacingMergeTree keeps one row; queries read with FINAL until merges catch up.
 */
export function createIngestHandler(client: ClickHouseClient, log: Logger): EventHandler {
  return {
    name: 'ingest',
    async handle(events: RequestEvent[]) {
      if (events.length === 0) return
      const started = Date.now()
      await client.insert({ table: REQUEST_TABLE, values: events.map(toRow), format: 'JSONEachRow' })
      log.debug({ batch: events.length, ms: Date.now() - started }, 'ingest_batch_written')
    },
  }
}
