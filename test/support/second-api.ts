import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../services/api/app.ts'
import { createMemoryRateLimiter } from '../../services/api/http/rate-limiter.ts'
import { SINGLE_NODE } from '../../services/shared/clickhouse/cluster-ddl.ts'
import { retentionKeeper } from '../../services/shared/clickhouse/retention.ts'
import { createLogger } from '../../services/shared/logger.ts'
import type { Sql } from '../../services/shared/postgres.ts'
import { openScratch } from '../../services/shared/scratch.ts'
import type { TestTally } from './harness.ts'

/**
 * Another API process beside a test Tally, composed as production composes one but in this
 * process: the Tally's engines, the Postgres client `sql` (its own pool, when the test needs a
 * process of its own), a scratch folder of its own, a memory rate limiter, no callers' SQL.
 * Closing the app closes its scratch folder; `sql` is the caller's.
 */
export async function secondApi(
  tally: Pick<TestTally, 'config' | 'clickhouse' | 'blobs' | 'publisher'>,
  sql: Sql,
  /** How long its retention changes wait for the ClickHouse migration lock. */
  retentionLockWaitMs = 60_000,
): Promise<FastifyInstance> {
  const log = createLogger(tally.config, 'second-api')
  const scratch = await openScratch(tally.config.TALLY_DATA_DIR, log)
  const app = await buildApp({
    config: tally.config,
    log,
    sql,
    clickhouse: tally.clickhouse,
    blobs: tally.blobs,
    publisher: tally.publisher,
    rateLimiter: createMemoryRateLimiter(),
    readiness: [],
    sqlAccess: { unavailable: 'not needed here' },
    scratch,
    retention: retentionKeeper(
      sql,
      { client: tally.clickhouse, layout: SINGLE_NODE },
      tally.config.TALLY_RETENTION_DAYS,
      log,
      retentionLockWaitMs,
    ),
  })
  app.addHook('onClose', () => scratch.close())
  return app
}
