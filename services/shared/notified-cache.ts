import type { Logger } from './logger.ts'
import type { Sql } from './postgres.ts'

export interface NotifiedCacheOptions<V> {
  /** Postgres NOTIFY channel on which every change is announced, in the transaction that makes it. */
  channel: string
  /** Names the cache in its log events (`<name>_unlisten_failed`). */
  name: string
  ttlMs: number
  /** Past this many entries the cache starts again empty. */
  maxEntries: number
  /** The group a notification names (default: its payload); every entry filed under it is forgotten. */
  groupOfNotice?: (payload: string) => string
  /** The group a value is filed under (default: its key). */
  groupOf?: (value: V) => string
  /**
   * Also remember keys the load did not find, apart from the values, so that a flood of misses
   * can only evict other misses. A miss is filed under its key.
   */
  misses?: { ttlMs: number; maxEntries: number }
}

interface Entry<V> {
  value: V
  expires: number
}

/**
 * An in-process cache of what Postgres holds, kept true by LISTEN/NOTIFY: each notification
 * forgets the group it names in every process at once; each (re)connect forgets everything, since
 * notifications may have been missed while away. A load that was in flight while something was
 * forgotten is answered but not kept, so a stale row never outlives its notification. Entries
 * also expire, as a net under a lost notification.
 */
export async function createNotifiedCache<V>(sql: Sql, log: Logger, options: NotifiedCacheOptions<V>) {
  const { ttlMs, maxEntries, groupOf, misses: missOptions } = options
  const entries = new Map<string, Entry<V>>()
  const keysOfGroup = new Map<string, Set<string>>()
  const misses = new Map<string, number>()
  // Loads in flight, by generation and keys: callers missing the same keys together share one.
  const loads = new Map<string, Promise<Map<string, V>>>()
  let generation = 0

  const forget = (group: string) => {
    generation++
    for (const key of keysOfGroup.get(group) ?? []) entries.delete(key)
    keysOfGroup.delete(group)
    misses.delete(group)
  }
  const clear = () => {
    generation++
    entries.clear()
    keysOfGroup.clear()
    misses.clear()
  }
  const groupOfNotice = options.groupOfNotice ?? ((payload: string) => payload)
  // The third callback runs on every (re)connect.
  const listener = await sql.listen(options.channel, (payload) => forget(groupOfNotice(payload)), clear)

  const keep = (key: string, value: V, expires: number) => {
    if (entries.size >= maxEntries) {
      entries.clear()
      keysOfGroup.clear()
    }
    entries.set(key, { value, expires })
    const group = groupOf ? groupOf(value) : key
    const keys = keysOfGroup.get(group) ?? new Set<string>()
    keys.add(key)
    keysOfGroup.set(group, keys)
  }
  const keepMiss = (key: string, now: number) => {
    if (!missOptions) return
    if (misses.size >= missOptions.maxEntries) misses.clear()
    misses.set(key, now + missOptions.ttlMs)
  }

  const load = (missing: string[], loadMissing: (keys: string[]) => Promise<Map<string, V>>, now: number) => {
    const before = generation
    const loadKey = `${before}:${missing.join(',')}`
    let loading = loads.get(loadKey)
    if (!loading) {
      loading = loadMissing(missing).then((found) => {
        if (generation !== before) return found
        for (const key of missing) {
          const value = found.get(key)
          if (value === undefined) keepMiss(key, now)
          else keep(key, value, now + ttlMs)
        }
        return found
      })
      loads.set(loadKey, loading)
      void loading.finally(() => loads.delete(loadKey)).catch(() => {})
    }
    return loading
  }

  /** A fresh entry's value, null for a remembered miss, undefined when it must be loaded. */
  const cached = (key: string, now: number): V | null | undefined => {
    const hit = entries.get(key)
    if (hit && hit.expires > now) return hit.value
    return (misses.get(key) ?? 0) > now ? null : undefined
  }

  return {
    /** The cached values of `keys`; `loadMissing` is asked for the rest, and what it finds is kept. */
    async getMany(
      keys: Iterable<string>,
      loadMissing: (keys: string[]) => Promise<Map<string, V>>,
    ): Promise<Map<string, V>> {
      const now = Date.now()
      const out = new Map<string, V>()
      const missing: string[] = []
      for (const key of new Set(keys)) {
        const value = cached(key, now)
        if (value === undefined) missing.push(key)
        else if (value !== null) out.set(key, value)
      }
      if (missing.length === 0) return out
      for (const [key, value] of await load(missing, loadMissing, now)) out.set(key, value)
      return out
    },

    /** The cached value of `key`, else `loadOne()`'s; null when it finds nothing. */
    async get(key: string, loadOne: () => Promise<V | null>): Promise<V | null> {
      const now = Date.now()
      const value = cached(key, now)
      if (value !== undefined) return value
      const found = await load(
        [key],
        async () => {
          const loaded = await loadOne()
          return new Map(loaded === null ? [] : [[key, loaded]])
        },
        now,
      )
      return found.get(key) ?? null
    },

    /** Replaces a cached value in place (same group, same expiry), e.g. with a fresher link. */
    refresh(key: string, value: V) {
      const hit = entries.get(key)
      if (hit) hit.value = value
    },

    /** This process forgets the group at once; the others when the notification arrives. */
    forget,

    async close() {
      await listener.unlisten().catch((err: unknown) => log.warn({ err }, `${options.name}_unlisten_failed`))
    },
  }
}

export type NotifiedCache<V> = Awaited<ReturnType<typeof createNotifiedCache<V>>>
