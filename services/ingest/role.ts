import { startRollupBuilder } from '../shared/clickhouse/request-hours.ts'
import { createDeletedOrganizations } from '../shared/deleted-organizations.ts'
import { type ConsumerRole, needed } from '../shared/process/role.ts'
import { createIngestHandler } from './handler.ts'

/**
 * Request events into ClickHouse's request_response_rmt; those of deleted organizations dropped.
 * Beside it, the metrics rollup of closed hours (request_hours), built from what was written.
 */
export const ingestRole: ConsumerRole = {
  group: 'tally-ingest',
  deadLettersUndecodable: true,
  needs: { clickhouse: true, postgres: true },
  async start({ config, engines, log, shutdown }) {
    const deletions = await createDeletedOrganizations(
      needed(engines.postgres, 'postgres', 'ingest').sql,
      log,
    )
    shutdown.add('deleted organizations (ingest)', () => deletions.close())
    const clickhouse = needed(engines.clickhouse, 'clickhouse', 'ingest').client
    const rollup = startRollupBuilder(clickhouse, log.child({ component: 'metrics-rollup' }), {
      intervalMs: config.TALLY_METRICS_ROLLUP_INTERVAL,
      settleMs: config.TALLY_METRICS_ROLLUP_SETTLE,
      horizonMs: config.TALLY_METRICS_ROLLUP_HORIZON,
      maxHours: 200,
      maxHoursPerOrg: 24,
      statementTimeoutMs: config.TALLY_CLICKHOUSE_REQUEST_TIMEOUT,
      memoryBytes: config.TALLY_QUERY_MAX_MEMORY,
    })
    shutdown.add('metrics rollup builder', () => rollup.stop())
    return createIngestHandler(clickhouse, log, deletions)
  },
}
