import type { FastifyInstance } from 'fastify'
import { retentionKeeper } from '../shared/clickhouse/retention.ts'
import { clickHouseStartUp } from '../shared/engines.ts'
import { needed, type ServingRole } from '../shared/process/role.ts'
import { openScratch } from '../shared/scratch.ts'
import { type AnalystDoor, startAnalystDoor } from './analyst/door.ts'
import { apiUrl, buildApp } from './app.ts'
import { createAuthFailureLimit } from './http/auth-failures.ts'
import { openRateLimiter } from './http/rate-limiter.ts'
import { bootstrapFirstOrganization } from './keys/bootstrap.ts'
import { openSqlAccess } from './sql/engine-user.ts'

/** How long PATCH /admin/v1/organizations/{id} waits for the ClickHouse migration lock. */
const RETENTION_CHANGE_LOCK_WAIT_MS = 10_000

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
    // Exporters write export parts in scratch folders under TALLY_DATA_DIR; a deletion sweeps
    // those that processes killed mid-export left (this one's own claim tells it from theirs).
    const scratch = await openScratch(config.TALLY_DATA_DIR, log)
    shutdown.add('scratch folder', () => scratch.close())
    const app = await buildApp({
      config,
      log,
      sql: postgres.sql,
      clickhouse: clickhouse.client,
      sqlAccess: await clickHouseStartUp(config, log)('sql access', () =>
        openSqlAccess({ config, admin: clickhouse.client, sqlUrl: clickhouse.sqlUrl, log }),
      ),
      blobs,
      publisher,
      rateLimiter,
      readiness,
      scratch,
      // An admin's change waits for a migration or another change at most this long, then 503.
      retention: retentionKeeper(
        postgres.sql,
        clickhouse,
        config.TALLY_RETENTION_DAYS,
        log,
        RETENTION_CHANGE_LOCK_WAIT_MS,
      ),
    })
    await app.listen({ port: config.PORT, host: config.HOST })
    shutdown.add('api', () => app.close())
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
