import { Redis } from 'ioredis'
import type { Config } from '../../shared/config.ts'
import { withDeadline } from '../../shared/deadline.ts'
import type { Logger } from '../../shared/logger.ts'

interface RateLimitResult {
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

export interface RateLimiter {
  readonly kind: 'redis' | 'memory'
  /** Counts against `key`'s one-minute window of `limit` (and its one-second window, if given). */
  hit(key: string, limit: number, options?: HitOptions): Promise<RateLimitResult>
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
  return {
    kind: 'memory',
    async hit(key, limit, options = {}) {
      const t = now()
      const cost = options.cost ?? 1
      const [minute, minuteLeft] = count(`m:${key}`, MINUTE_MS, cost, t)
      const [second, secondLeft] =
        options.perSecond === undefined ? [undefined, undefined] : count(`s:${key}`, SECOND_MS, cost, t)
      return result(limit, options, [minute, second], [minuteLeft, secondLeft])
    },
    async close() {
      clearInterval(sweep)
    },
  }
}

const HIT = `
local cost = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCRBY', key, cost)
  if count == cost then redis.call('PEXPIRE', key, ARGV[i + 1]) end
  out[#out + 1] = count
  out[#out + 1] = redis.call('PTTL', key)
end
return out`

/**
 * Fixed one-minute (and one-second) windows shared by every API process through Redis, both
 * counted in one round trip. When Redis cannot be reached the request is let through and a
 * warning logged: rate limiting protects the service, it must not take it down.
 */
export function createRedisRateLimiter(url: string, log: Logger): RateLimiter {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000 })
  redis.on('error', (err) => log.warn({ err: err.message }, 'rate_limit_redis_error'))
  // Sent by its SHA1 (EVALSHA), the script's text only when Redis does not hold it yet (NOSCRIPT,
  // after a restart or a SCRIPT FLUSH): a hit is a few dozen bytes, not the script each time.
  redis.defineCommand('tallyHit', { lua: HIT })
  const hitScript = (
    redis as unknown as { tallyHit(numKeys: number, ...args: (string | number)[]): Promise<unknown> }
  ).tallyHit.bind(redis)
  return {
    kind: 'redis',
    async hit(key, limit, options = {}) {
      try {
        const t = Date.now()
        const keys = [`tally:rl:${key}:${Math.floor(t / MINUTE_MS)}`]
        const ttls = [MINUTE_MS]
        if (options.perSecond !== undefined) {
          keys.push(`tally:rl:${key}:s:${Math.floor(t / SECOND_MS)}`)
          ttls.push(SECOND_MS)
        }
        const reply = hitScript(keys.length, ...keys, options.cost ?? 1, ...ttls)
        const [minute, minuteTtl, second, secondTtl] = (await withDeadline(
          reply,
          500,
          'no answer from Redis',
        )) as number[]
        return result(
          limit,
          options,
          [minute as number, second],
          [
            (minuteTtl ?? 0) > 0 ? (minuteTtl as number) : MINUTE_MS,
            (secondTtl ?? 0) > 0 ? secondTtl : SECOND_MS,
          ],
        )
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'rate_limit_unavailable')
        return { limit, remaining: limit, resetMs: MINUTE_MS, allowed: true, window: 'minute' }
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

export function openRateLimiter(config: Config, log: Logger): RateLimiter {
  return config.REDIS_URL ? createRedisRateLimiter(config.REDIS_URL, log) : createMemoryRateLimiter()
}
