import { Counter, Histogram } from 'prom-client'
import type { ClickHouseClient } from '../shared/clickhouse.ts'
import type { RequestEvent } from '../shared/events/request-event.ts'
import type { EventHandler } from '../shared/events/transport.ts'
import type { Logger } from '../shared/logger.ts'
import { toRow } from './rows.ts'

export const REQUEST_TABLE = 'request_response_rmt'

const written = new Counter({
  name: 'tally_events_written_total',
  help: 'Rows inserted into request_response_rmt (a redelivered event is written again and replaced)',
})
const batchSize = new Histogram({
  name: 'tally_ingest_batch_events',
  help: 'Events per ClickHouse insert',
  buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000],
})
const batchSeconds = new Histogram({
  name: 'tally_ingest_batch_duration_seconds',
  help: 'Duration of one ClickHouse insert, failed ones included',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
})

/**
 * Writes each batch to request_response_rmt in one insert. A re-ingested request has the same
 * sorting key, so ReplacingMergeTree keeps one row; queries read with FINAL until merges catch up.
 */
export function createIngestHandler(client: ClickHouseClient, log: Logger): EventHandler {
  return {
    name: 'ingest',
    async handle(events: RequestEvent[]) {
      if (events.length === 0) return
      const stop = batchSeconds.startTimer()
      try {
        await client.insert({ table: REQUEST_TABLE, values: events.map(toRow), format: 'JSONEachRow' })
      } finally {
        stop()
      }
      written.inc(events.length)
      batchSize.observe(events.length)
      log.debug({ batch: events.length }, 'ingest_batch_written')
    },
  }
}
