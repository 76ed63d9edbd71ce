import { Redis } from 'ioredis'
import type { Config } from '../../shared/config.ts'
import { withDeadline } from '../../shared/deadline.ts'
import type { Logger } from '../../shared/logger.ts'

export interface RateLimitResult {
  limit: number
  remaining: number
  /** Milliseconds until the window resets. */
  resetMs: number
  allowed: boolean
  /** Which window refused (the minute's when both did, or when allowed). */
  window: 'minute' | 'second'
}

interface HitOptions {
  /** What this hit counts: 1 (a request) by default, or events, bytes. */
  cost?: number
  /**
   * Also at most this much in each second, so that a minute's allowance cannot arrive in one
   * burst: what refuses first is reported.
   */
  perSecond?: number
}

/** One window pair of a hitAll: the key, its minute's limit, and what a hit counts. */
export interface Hit extends HitOptions {
  key: string
  limit: number
}

export interface RateLimiter {
  readonly kind: 'redis' | 'memory'
  /** Counts against `key`'s one-minute window of `limit` (and its one-second window, if given). */
  hit(key: string, limit: number, options?: HitOptions): Promise<RateLimitResult>
  /**
   * Counts each of `hits` in order, as hit() would, in one round trip, and stops after the first
   * one refused: the results up to and including it (so what follows a refusal is not counted).
   */
  hitAll(hits: readonly Hit[]): Promise<RateLimitResult[]>
  close(): Promise<void>
}

const MINUTE_MS = 60_000
const SECOND_MS = 1_000

/** The answer for counts `[minute, second]` and the windows' remaining times. */
function result(
  limit: number,
  options: HitOptions,
  counts: [number, number | undefined],
  resetMs: [number, number | undefined],
): RateLimitResult {
  const [minute, second] = counts
  const perSecond = options.perSecond
  // Over the minute's limit, the minute is what the caller must wait for.
  if (minute <= limit && perSecond !== undefined && second !== undefined && second > perSecond)
    return {
      limit: perSecond,
      remaining: 0,
      resetMs: resetMs[1] ?? SECOND_MS,
      allowed: false,
      window: 'second',
    }
  return {
    limit,
    remaining: Math.max(0, limit - minute),
    resetMs: resetMs[0],
    allowed: minute <= limit,
    window: 'minute',
  }
}

/** Fixed one-minute (and one-second) windows per key, kept in this process. */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>()
  const sweep = setInterval(() => {
    const cutoff = now() - MINUTE_MS
    for (const [key, w] of windows) if (w.start <= cutoff) windows.delete(key)
  }, MINUTE_MS)
  sweep.unref()
  const count = (key: string, ms: number, cost: number, t: number) => {
    let w = windows.get(key)
    if (!w || t - w.start >= ms) {
      w = { start: t - (t % ms), count: 0 }
      windows.set(key, w)
    }
    w.count += cost
    return [w.count, w.start + ms - t] as const
  }
  const hit = (key: string, limit: number, options: HitOptions = {}) => {
    const t = now()
    const cost = options.cost ?? 1
    const [minute, minuteLeft] = count(`m:${key}`, MINUTE_MS, cost, t)
    const [second, secondLeft] =
      options.perSecond === undefined ? [undefined, undefined] : count(`s:${key}`, SECOND_MS, cost, t)
    return result(limit, options, [minute, second], [minuteLeft, secondLeft])
  }
  return {
    kind: 'memory',
    async hit(key, limit, options) {
      return hit(key, limit, options)
    },
    async hitAll(hits) {
      const results: RateLimitResult[] = []
      for (const h of hits) {
        const r = hit(h.key, h.limit, h)
        results.push(r)
        if (!r.allowed) break
      }
      return results
    },
    async close() {
      clearInterval(sweep)
    },
  }
}

// KEYS: per hit, its minute's key, then its second's key when it has a per-second limit.
// ARGV: per hit, its cost, its minute's limit, its per-second limit (-1: none) and the two
// windows' lengths in ms. Per hit, four numbers back: the minute's count and remaining ms, the
// second's (-1, -1 when none); after a hit over a limit, nothing more is counted.
const HIT_ALL = `
local k = 1
local out = {}
for a = 1, #ARGV, 5 do
  local cost = tonumber(ARGV[a])
  local minute = redis.call('INCRBY', KEYS[k], cost)
  if minute == cost then redis.call('PEXPIRE', KEYS[k], ARGV[a + 3]) end
  out[#out + 1] = minute
  out[#out + 1] = redis.call('PTTL', KEYS[k])
  k = k + 1
  local refused = minute > tonumber(ARGV[a + 1])
  local perSecond = tonumber(ARGV[a + 2])
  if perSecond >= 0 then
    local second = redis.call('INCRBY', KEYS[k], cost)
    if second == cost then redis.call('PEXPIRE', KEYS[k], ARGV[a + 4]) end
    out[#out + 1] = second
    out[#out + 1] = redis.call('PTTL', KEYS[k])
    k = k + 1
    refused = refused or second > perSecond
  else
    out[#out + 1] = -1
    out[#out + 1] = -1
  end
  if refused then break end
end
return out`

/**
 * Fixed one-minute (and one-second) windows shared by every API process through Redis: every
 * window of a request counted in one round trip. When Redis cannot be reached the request is let
 * through and a warning logged: rate limiting protects the service, it must not take it down.
 */
export function createRedisRateLimiter(url: string, log: Logger): RateLimiter {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000 })
  redis.on('error', (err) => log.warn({ err: err.message }, 'rate_limit_redis_error'))
  // Sent by its SHA1 (EVALSHA), the script's text only when Redis does not hold it yet (NOSCRIPT,
  // after a restart or a SCRIPT FLUSH): a hit is a few dozen bytes, not the script each time.
  redis.defineCommand('tallyHitAll', { lua: HIT_ALL })
  const hitScript = (
    redis as unknown as { tallyHitAll(numKeys: number, ...args: (string | number)[]): Promise<unknown> }
  ).tallyHitAll.bind(redis)
  const hitAll = async (hits: readonly Hit[]): Promise<RateLimitResult[]> => {
    try {
      const t = Date.now()
      const keys: string[] = []
      const args: number[] = []
      for (const h of hits) {
        keys.push(`tally:rl:${h.key}:${Math.floor(t / MINUTE_MS)}`)
        if (h.perSecond !== undefined) keys.push(`tally:rl:${h.key}:s:${Math.floor(t / SECOND_MS)}`)
        args.push(h.cost ?? 1, h.limit, h.perSecond ?? -1, MINUTE_MS, SECOND_MS)
      }
      const reply = (await withDeadline(
        hitScript(keys.length, ...keys, ...args),
        500,
        'no answer from Redis',
      )) as number[]
      const results: RateLimitResult[] = []
      for (let i = 0; i * 4 < reply.length; i++) {
        const h = hits[i] as Hit
        const [minute, minuteTtl, second, secondTtl] = reply.slice(i * 4, i * 4 + 4) as [
          number,
          number,
          number,
          number,
        ]
        results.push(
          result(
            h.limit,
            h,
            [minute, h.perSecond === undefined ? undefined : second],
            [minuteTtl > 0 ? minuteTtl : MINUTE_MS, secondTtl > 0 ? secondTtl : SECOND_MS],
          ),
        )
      }
      return results
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'rate_limit_unavailable')
      return hits.map((h) => ({
        limit: h.limit,
        remaining: h.limit,
        resetMs: MINUTE_MS,
        allowed: true,
        window: 'minute' as const,
      }))
    }
  }
  return {
    kind: 'redis',
    async hit(key, limit, options = {}) {
      return (await hitAll([{ key, limit, ...options }]))[0] as RateLimitResult
    },
    hitAll,
    async close() {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

export function openRateLimiter(config: Config, log: Logger): RateLimiter {
  return config.REDIS_URL ? createRedisRateLimiter(config.REDIS_URL, log) : createMemoryRateLimiter()
}
