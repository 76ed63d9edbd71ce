import type { FastifyInstance } from 'fastify'
import { publicUrl } from '../shared/config.ts'
import { needed, type ServingRole } from '../shared/process/role.ts'
import { openRateLimiter } from '../shared/rate-limit.ts'
import { buildApp } from './app.ts'
import { bootstrapFirstOrganization } from './keys/bootstrap.ts'

export interface ApiStarted {
  app: FastifyInstance
  url: string
  /** Set on the very first start only: the first organization's admin key, to show once. */
  bootstrap: { secret: string; generated: boolean } | null
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
    const app = await buildApp({
      config,
      log,
      sql: postgres.sql,
      clickhouse: clickhouse.client,
      clickhouseSqlUrl: clickhouse.sqlUrl,
      blobs: needed(engines.blobs, 'blobs', 'api'),
      publisher,
      rateLimiter,
      readiness,
    })
    await app.listen({ port: config.PORT, host: config.HOST })
    shutdown.add('api', () => app.close())
    const address = app.server.address()
    const port = address && typeof address === 'object' ? address.port : config.PORT
    const url = publicUrl({ ...config, PORT: port })
    setPublicUrl(url)
    return { app, url, bootstrap }
  },
}
