import { Redis } from 'ioredis'
import type { Config } from './config.ts'
import { withDeadline } from './deadline.ts'
import type { Logger } from './logger.ts'

interface RateLimitResult {
  limit: number
  remaining: number
  /** Milliseconds until the window resets. */
  resetMs: number
  allowed: boolean
}

export interface RateLimiter {
  readonly kind: 'redis' | 'memory'
  /** Counts `cost` (1 by default: a request; or events, bytes) against `key`'s window of `limit`. */
  hit(key: string, limit: number, cost?: number): Promise<RateLimitResult>
  close(): Promise<void>
}

const WINDOW_MS = 60_000

function result(limit: number, count: number, resetMs: number): RateLimitResult {
  return { limit, remaining: Math.max(0, limit - count), resetMs, allowed: count <= limit }
}

/** Fixed one-minute windows per key, kept in this process. */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>()
  const sweep = setInterval(() => {
    const cutoff = now() - WINDOW_MS
    for (const [key, w] of windows) if (w.start <= cutoff) windows.delete(key)
  }, WINDOW_MS)
  sweep.unref()
  return {
    kind: 'memory',
    async hit(key, limit, cost = 1) {
      const t = now()
      let w = windows.get(key)
      if (!w || t - w.start >= WINDOW_MS) {
        w = { start: t - (t % WINDOW_MS), count: 0 }
        windows.set(key, w)
      }
      w.count += cost
      return result(limit, w.count, w.start + WINDOW_MS - t)
    },
    async close() {
      clearInterval(sweep)
    },
  }
}

const HIT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`

/**
 * Fixed one-minute windows shared by every API process through Redis. When Redis cannot be
 * reached the request is let through and a warning logged: rate limiting protects the service,
 * it must not take it down.
 */
export function createRedisRateLimiter(url: string, log: Logger): RateLimiter {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000 })
  redis.on('error', (err) => log.warn({ err: err.message }, 'rate_limit_redis_error'))
  return {
    kind: 'redis',
    async hit(key, limit, cost = 1) {
      try {
        const window = Math.floor(Date.now() / WINDOW_MS)
        const reply = redis.eval(HIT, 1, `tally:rl:${key}:${window}`, WINDOW_MS, cost)
        const [count, ttl] = (await withDeadline(reply, 500, 'no answer from Redis')) as [number, number]
        return result(limit, count, ttl > 0 ? ttl : WINDOW_MS)
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'rate_limit_unavailable')
        return { limit, remaining: limit, resetMs: WINDOW_MS, allowed: true }
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
