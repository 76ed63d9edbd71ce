import type { Logger } from '../../shared/logger.ts'
import { createNotifiedCache, type NotifiedCache } from '../../shared/notified-cache.ts'
import type { Sql } from '../../shared/postgres.ts'
import { PROMPTS_CHANNEL } from './repo.ts'

/**
 * In-process cache of the look-ups SDKs make at run time (a version by id, the version of an
 * environment), grouped by prompt: any change to a prompt is announced on PROMPTS_CHANNEL in the
 * transaction that makes it, and every process then forgets that prompt's entries.
 */
export function createLookupCache<T>(sql: Sql, log: Logger, promptIdOf: (value: T) => string) {
  return createNotifiedCache<T>(sql, log, {
    channel: PROMPTS_CHANNEL,
    name: 'prompt_cache',
    ttlMs: 60_000,
    maxEntries: 50_000,
    groupOf: promptIdOf,
  })
}

export type LookupCache<T> = NotifiedCache<T>
