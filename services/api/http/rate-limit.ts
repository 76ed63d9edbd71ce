import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import type { RateLimiter } from '../../shared/rate-limit.ts'
import { principalOf } from './auth.ts'

/**
 * Per-key limits with the IETF RateLimit headers on every answer and Retry-After on 429.
 * Runs after authentication, so the key is known.
 */
export function rateLimitHook(
  limiter: RateLimiter,
  limitPerMinute: number,
  keyOf: (request: FastifyRequest) => string = (request) => principalOf(request).keyId,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const r = await limiter.hit(keyOf(request), limitPerMinute)
    const resetSeconds = Math.max(1, Math.ceil(r.resetMs / 1000))
    reply.header('RateLimit-Limit', r.limit)
    reply.header('RateLimit-Remaining', r.remaining)
    reply.header('RateLimit-Reset', resetSeconds)
    if (!r.allowed) {
      reply.header('Retry-After', resetSeconds)
      throw new AppError(
        429,
        'rate_limited',
        `Rate limit of ${r.limit} requests per minute exceeded; retry in ${resetSeconds} s`,
      )
    }
  }
}
