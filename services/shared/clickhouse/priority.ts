/**
 * CPU priority of an organization's queries in ClickHouse, from how much of the engine it used
 * lately. ClickHouse runs a query's threads at the OS priority of its `os_thread_priority` setting
 * (a nice value, 0 to 19: the higher, the smaller the share of a busy CPU); the kernel's scheduler
 * does the rest, inside every block, which no limit checked between blocks can. An organization
 * that used little runs at 0; one that keeps the engine busy runs at up to 19, so that another
 * organization's small query gets a core at once instead of a third of one.
 *
 * The server applies the setting only with the CAP_SYS_NICE capability (a clickhouse-server
 * package sets it; the embedded server keeps it when Tally starts it as root); without it the
 * setting is accepted and nothing changes.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

/** The nicest a query can be: Linux's lowest priority. */
export const LOWEST_PRIORITY = 19
/** Work nobody waits on an answer for (exports): below any organization's first query. */
export const BACKGROUND_PRIORITY = 10
/** How fast what an organization used is forgotten: half of it after this long. */
const HALF_LIFE_MS = 10_000
/** Cores an organization may keep busy on average before its queries lose priority. */
const FREE_CORES = 0.25
/** Cores at which its queries reach the lowest priority. */
const FULL_CORES = 1
/** Nice added per query of the same organization already running: its third query starts at 12. */
const PER_RUNNING = 6

interface Usage {
  /** Engine milliseconds of finished queries, decayed to `at`. */
  usedMs: number
  at: number
  /** Start times of the queries running now. */
  running: Set<{ startedAt: number }>
}

/**
 * Tracks engine time per organization (the wall time of its queries, running ones included,
 * forgotten with a half-life of 10 s) and gives each new query its nice value.
 */
export function createFairShare(now: () => number = Date.now) {
  const usage = new Map<string, Usage>()
  let sweptAt = now()

  /** Forgets the organizations idle long enough for their use to have decayed to nothing. */
  function sweep(t: number): void {
    if (t - sweptAt < HALF_LIFE_MS) return
    sweptAt = t
    for (const [organizationId, u] of usage)
      if (u.running.size === 0 && decayed(u, t) < 1) usage.delete(organizationId)
  }

  function decayed(u: Usage, t: number): number {
    return u.usedMs * 2 ** (-(t - u.at) / HALF_LIFE_MS)
  }

  return {
    /**
     * A query of `organizationId` starts: its nice value, and `end` to call when the server is
     * done with it.
     */
    start(organizationId: string): { priority: number; end(): void } {
      const t = now()
      sweep(t)
      const u = usage.get(organizationId) ?? { usedMs: 0, at: t, running: new Set() }
      usage.set(organizationId, u)
      let recentMs = decayed(u, t)
      for (const r of u.running) recentMs += t - r.startedAt
      // Cores kept busy on average: a steady use of c cores decays to c × HALF_LIFE / ln 2.
      const cores = (recentMs * Math.LN2) / HALF_LIFE_MS
      const priority = niceFor(cores, u.running.size)
      const query = { startedAt: t }
      u.running.add(query)
      let ended = false
      return {
        priority,
        end() {
          if (ended) return
          ended = true
          const at = now()
          u.usedMs = decayed(u, at) + (at - query.startedAt)
          u.at = at
          u.running.delete(query)
        },
      }
    },
    /** Organizations tracked now: those active in the last minutes. */
    size(): number {
      return usage.size
    },
  }
}

export type FairShare = ReturnType<typeof createFairShare>

/** The nice value of a query whose organization kept `cores` busy lately and runs `running` now. */
export function niceFor(cores: number, running: number): number {
  const byUse = ((cores - FREE_CORES) / (FULL_CORES - FREE_CORES)) * LOWEST_PRIORITY
  const value = Math.round(Math.max(0, byUse) + PER_RUNNING * running)
  if (Number.isNaN(value)) return 0
  return Math.min(LOWEST_PRIORITY, Math.max(0, value))
}

const current = new AsyncLocalStorage<number>()

/**
 * Runs `work` with its ClickHouse queries at `priority`: readRows and the SQL runner read it
 * (enginePriority) and send it as `os_thread_priority`, so no repository between the gate that
 * decides it and the query that carries it passes it along.
 */
export function withEnginePriority<T>(priority: number, work: () => Promise<T>): Promise<T> {
  return current.run(priority, work)
}

/** The `os_thread_priority` setting of a query run here; empty outside withEnginePriority or at 0. */
export function enginePriority(): { os_thread_priority?: string } {
  const priority = current.getStore()
  // An Int64 setting: the client's type for it is a string.
  return priority ? { os_thread_priority: String(priority) } : {}
}
