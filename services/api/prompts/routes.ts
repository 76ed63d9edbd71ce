import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import type { Config } from '../../shared/config.ts'
import type { Logger } from '../../shared/logger.ts'
import type { Sql } from '../../shared/postgres.ts'
import { createLookupCache } from './cache.ts'
import { promptCatalogRoutes } from './catalog-routes.ts'
import { createPromptRepo } from './repo.ts'
import { type CachedLookup, createPromptService } from './service.ts'
import { promptVersionRoutes } from './version-routes.ts'

export interface PromptDeps {
  config: Config
  log: Logger
  sql: Sql
  blobs: BlobStore
}

/** The prompt-2025 API: prompts, their immutable versions, environments and bodies in object storage. */
export function promptRoutes(deps: PromptDeps): FastifyPluginAsyncZod {
  return async (app) => {
    const repo = createPromptRepo(deps.sql)
    const cache = await createLookupCache<CachedLookup>(deps.sql, deps.log, (c) => c.version.prompt_id)
    app.addHook('onClose', () => cache.close())
    const service = createPromptService({
      sql: deps.sql,
      blobs: deps.blobs,
      log: deps.log,
      repo,
      cache,
      linkTtlMs: deps.config.TALLY_SIGNED_LINK_TTL,
    })
    await app.register(promptCatalogRoutes(service, repo))
    await app.register(promptVersionRoutes(service))
  }
}
