import { createDeletedOrganizations } from '../shared/deleted-organizations.ts'
import { type ConsumerRole, needed } from '../shared/process/role.ts'
import { createIngestHandler } from './handler.ts'

/** Request events into ClickHouse's request_response_rmt; those of deleted organizations dropped. */
export const ingestRole: ConsumerRole = {
  group: 'tally-ingest',
  deadLettersUndecodable: true,
  needs: { clickhouse: true, postgres: true },
  async start({ engines, log, shutdown }) {
    const deletions = await createDeletedOrganizations(
      needed(engines.postgres, 'postgres', 'ingest').sql,
      log,
    )
    shutdown.add('deleted organizations (ingest)', () => deletions.close())
    return createIngestHandler(needed(engines.clickhouse, 'clickhouse', 'ingest').client, log, deletions)
  },
}
