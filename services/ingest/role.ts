import { startRollupBuilder } from '../shared/clickhouse/request-hours.ts'
import { createDeletedOrganizations } from '../shared/deleted-organizations.ts'
import { loadRequestCodec } from '../shared/events/codec.ts'
import { type ConsumerRole, needed } from '../shared/process/role.ts'
import { createIngestHandler } from './handler.ts'
import { createDeletionSweeper } from './sweeper.ts'

/**
 * Request events into ClickHouse's request_response_rmt; those of deleted organizations dropped.
 * Beside it, the metrics rollup of closed hours (request_hours), built from what was written.
 */
export const ingestRole: ConsumerRole = {
  group: 'tally-ingest',
  deadLettersUndecodable: true,
  lingers: true,
  needs: { clickhouse: true, postgres: true },
  async start({ config, engines, log, shutdown }) {
    const deletions = await createDeletedOrganizations(
      needed(engines.postgres, 'postgres', 'ingest').sql,
      log,
    )
    shutdown.add('deleted organizations (ingest)', () => deletions.close())
    const clickhouse = needed(engines.clickhouse, 'clickhouse', 'ingest').client
    const sweeper = createDeletionSweeper(clickhouse, deletions, log)
    const rollup = startRollupBuilder(clickhouse, log.child({ component: 'metrics-rollup' }), {
      intervalMs: config.TALLY_METRICS_ROLLUP_INTERVAL,
      settleMs: config.TALLY_METRICS_ROLLUP_SETTLE,
      horizonMs: config.TALLY_METRICS_ROLLUP_HORIZON,
      maxHours: 200,
      maxHoursPerOrg: 24,
      statementTimeoutMs: config.TALLY_CLICKHOUSE_REQUEST_TIMEOUT,
      memoryBytes: config.TALLY_QUERY_MAX_MEMORY,
      // A build writes rows of its organization: none for a deleted one, and the others as the
      // ingest's own writes, so that a deletion announced meanwhile waits for them and sweeps again.
      async admit(organizationId, build) {
        if ((await deletions.among([organizationId])).size > 0) return false
        sweeper.writes([organizationId])
        await sweeper.writing(build())
        return true
      },
    })
    shutdown.add('metrics rollup builder', () => rollup.stop())
    return createIngestHandler(clickhouse, log, deletions, await loadRequestCodec(), sweeper)
  },
}
