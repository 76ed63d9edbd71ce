import type { Logger } from '../../shared/logger.ts'
import { createNotifiedCache } from '../../shared/notified-cache.ts'
import type { Sql } from '../../shared/postgres.ts'
import type { Principal } from '../http/auth.ts'
import { API_KEYS_CHANNEL, type ApiKeyRepo } from './repo.ts'
import { hashKey } from './secret.ts'

/**
 * Who holds an API key: the PrincipalLookup of authentication (http/auth.ts). Look-ups are cached
 * briefly; a deleted key is dropped from every process's cache at once through Postgres NOTIFY.
 */
export async function createPrincipalCache(repo: ApiKeyRepo, sql: Sql, log: Logger) {
  // By key hash. Unknown tokens are cached apart from known keys, so a flood of made-up tokens
  // can only evict other made-up tokens, never the keys real callers use.
  const principals = await createNotifiedCache<Principal>(sql, log, {
    channel: API_KEYS_CHANNEL,
    name: 'auth',
    ttlMs: 60_000,
    maxEntries: 50_000,
    misses: { ttlMs: 5_000, maxEntries: 10_000 },
  })
  return {
    find: (secret: string): Promise<Principal | null> =>
      principals.get(hashKey(secret).toString('hex'), () => repo.findPrincipal(secret)),
    /** Forgets a key (by hash) at once in this process; other processes hear it through NOTIFY. */
    forget: principals.forget,
    close: principals.close,
  }
}
