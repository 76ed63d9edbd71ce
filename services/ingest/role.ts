import { type ConsumerRole, needed } from '../shared/process/role.ts'
import { createIngestHandler } from './handler.ts'

/** Request events into ClickHouse's request_response_rmt. */
export const ingestRole: ConsumerRole = {
  group: 'tally-ingest',
  deadLettersUndecodable: true,
  needs: { clickhouse: true },
  async start({ engines, log }) {
    return createIngestHandler(needed(engines.clickhouse, 'clickhouse', 'ingest').client, log)
  },
}
