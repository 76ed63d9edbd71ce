import type { Logger } from '../../shared/logger.ts'
import type { Sql } from '../../shared/postgres.ts'
import { PROMPTS_CHANNEL } from './repo.ts'

const TTL_MS = 60_000
const MAX_ENTRIES = 50_000

interface Entry<T> {
  value: T
  promptId: string
  expires: number
}

/**
 * In-process cache of the look-ups SDKs make at run time (a version by id, the version of an
 * environment), grouped by prompt. Any change to a prompt is announced on PROMPTS_CHANNEL in the
 * transaction that makes it; every process then forgets that prompt's entries. A load that was
 * in flight while something was forgotten is answered but not kept, so a stale row never
 * outlives the notification. Entries also expire, as a net under a lost connection.
 */
export async function createLookupCache<T>(sql: Sql, log: Logger) {
  const entries = new Map<string, Entry<T>>()
  const keysOfPrompt = new Map<string, Set<string>>()
  let generation = 0

  const forget = (promptId: string) => {
    generation++
    for (const key of keysOfPrompt.get(promptId) ?? []) entries.delete(key)
    keysOfPrompt.delete(promptId)
  }
  const clear = () => {
    generation++
    entries.clear()
    keysOfPrompt.clear()
  }
  // The third callback runs on every (re)connect: whatever was missed while away is dropped.
  const listener = await sql.listen(PROMPTS_CHANNEL, forget, clear)

  return {
    /** The cached value, else `load()`'s (kept when found). `promptIdOf` files it under its prompt. */
    async get(
      key: string,
      load: () => Promise<T | null>,
      promptIdOf: (value: T) => string,
    ): Promise<T | null> {
      const now = Date.now()
      const hit = entries.get(key)
      if (hit && hit.expires > now) return hit.value
      const before = generation
      const value = await load()
      if (value === null || generation !== before) return value
      if (entries.size >= MAX_ENTRIES) clear()
      const promptId = promptIdOf(value)
      entries.set(key, { value, promptId, expires: now + TTL_MS })
      const keys = keysOfPrompt.get(promptId) ?? new Set<string>()
      keys.add(key)
      keysOfPrompt.set(promptId, keys)
      return value
    },
    /** Replaces a cached value in place (same prompt, same expiry), e.g. with a fresher link. */
    refresh(key: string, value: T) {
      const hit = entries.get(key)
      if (hit) hit.value = value
    },
    /** This process forgets at once; the others when the notification arrives. */
    forget,
    async close() {
      await listener.unlisten().catch((err: unknown) => log.warn({ err }, 'prompt_cache_unlisten_failed'))
    },
  }
}

export type LookupCache<T> = Awaited<ReturnType<typeof createLookupCache<T>>>
