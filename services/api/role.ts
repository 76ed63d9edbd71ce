import type { FastifyInstance } from 'fastify'
import { createDeletedOrganizations } from '../shared/deleted-organizations.ts'
import { needed, type ServingRole } from '../shared/process/role.ts'
import { openRateLimiter } from '../shared/rate-limit.ts'
import { openScratch } from '../shared/scratch.ts'
import { type AnalystDoor, startAnalystDoor } from './analyst/door.ts'
import { apiUrl, buildApp } from './app.ts'
import { createExportQueries } from './exports/query.ts'
import { createExportRepo } from './exports/repo.ts'
import { type ExportWorker, startExportWorker } from './exports/worker.ts'
import { createAuthFailureLimit } from './http/auth-failures.ts'
import { bootstrapFirstOrganization } from './keys/bootstrap.ts'
import { openSqlAccess } from './sql/engine-user.ts'

export interface ApiStarted {
  app: FastifyInstance
  url: string
  /** Set on the very first start only: the first organization's admin key, to show once. */
  bootstrap: { secret: string; generated: boolean } | null
  /** Where data teams connect ClickHouse clients, with what they sign in with; absent: no door. */
  analyst?: { url: string; username: string; password: string }
}

/** The HTTP API: takes requests, publishes their events, answers queries. */
export const apiRole: ServingRole<ApiStarted> = {
  needs: { postgres: true, clickhouse: true, blobs: true },
  async start({ config, log, shutdown, engines, publisher, readiness, setPublicUrl }) {
    const postgres = needed(engines.postgres, 'postgres', 'api')
    const bootstrap = await bootstrapFirstOrganization(postgres.sql, config.TALLY_BOOTSTRAP_API_KEY)
    const rateLimiter = openRateLimiter(config, log)
    shutdown.add('rate limiter', () => rateLimiter.close())
    const clickhouse = needed(engines.clickhouse, 'clickhouse', 'api')
    const blobs = needed(engines.blobs, 'blobs', 'api')
    // Closed after the export worker stops (steps run in reverse): its parts are written here.
    const scratch = await openScratch(config.TALLY_DATA_DIR, log)
    shutdown.add('scratch folder', () => scratch.close())
    let exportWorker: ExportWorker | undefined
    const app = await buildApp({
      config,
      log,
      sql: postgres.sql,
      clickhouse: clickhouse.client,
      sqlAccess: await openSqlAccess({ config, admin: clickhouse.client, sqlUrl: clickhouse.sqlUrl, log }),
      blobs,
      publisher,
      rateLimiter,
      readiness,
      wakeExports: () => exportWorker?.wake(),
      scratch,
    })
    await app.listen({ port: config.PORT, host: config.HOST })
    shutdown.add('api', () => app.close())
    if (config.TALLY_EXPORT_CONCURRENCY > 0) {
      const deletions = await createDeletedOrganizations(postgres.sql, log)
      shutdown.add('deleted organizations', () => deletions.close())
      exportWorker = startExportWorker({
        repo: createExportRepo(postgres.sql),
        queries: createExportQueries(clickhouse.client, {
          timeoutMs: config.TALLY_EXPORT_QUERY_TIMEOUT,
          maxThreads: config.TALLY_QUERY_MAX_THREADS,
        }),
        blobs,
        log: log.child({ component: 'exports' }),
        concurrency: config.TALLY_EXPORT_CONCURRENCY,
        partRows: config.TALLY_EXPORT_PART_ROWS,
        stepTimeoutMs: config.TALLY_EXPORT_QUERY_TIMEOUT,
        leaseMs: config.TALLY_EXPORT_LEASE,
        pollMs: config.TALLY_EXPORT_POLL_INTERVAL,
        settleMs: config.TALLY_EXPORT_SETTLE_DELAY,
        maxPending: config.TALLY_EXPORT_MAX_PENDING,
        retrySchedule: config.TALLY_EXPORT_RETRY_SCHEDULE,
        scratchDir: scratch.dir,
        deletions,
      })
      // Stopped before the API closes (steps run in reverse): running exports are handed back.
      const worker = exportWorker
      shutdown.add('export worker', () => worker.stop())
    }
    let door: AnalystDoor | undefined
    if (clickhouse.analyst) {
      door = await startAnalystDoor({
        host: config.HOST,
        port: config.TALLY_ANALYST_PORT,
        engineUrl: clickhouse.analyst.engineUrl,
        username: clickhouse.analyst.username,
        password: clickhouse.analyst.password,
        maxQueries: config.TALLY_ANALYST_MAX_QUERIES,
        deadlineMs: config.TALLY_ANALYST_TIMEOUT,
        authFailures: createAuthFailureLimit(rateLimiter, config.TALLY_AUTH_FAILURES_PER_MINUTE),
        log,
      })
      const opened = door
      shutdown.add('analyst door', () => opened.close())
    }
    const url = apiUrl(app, config)
    setPublicUrl(url)
    const analyst =
      door && clickhouse.analyst
        ? { url: door.url, username: clickhouse.analyst.username, password: clickhouse.analyst.password }
        : undefined
    return { app, url, bootstrap, ...(analyst ? { analyst } : {}) }
  },
}
