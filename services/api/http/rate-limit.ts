import { Transform } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import { principalOf } from './auth.ts'
import type { Hit, RateLimiter, RateLimitResult } from './rate-limiter.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route takes intake events: while its organization is over its events in the current
     * second or minute (an intake was refused for them), it is refused (429) before its body is
     * read, so a flood's refused requests cost no parsing.
     */
    takesEvents?: boolean
  }
}

const limited = (what: string, r: { limit: number; resetMs: number; window: 'minute' | 'second' }) => {
  const seconds = Math.max(1, Math.ceil(r.resetMs / 1000))
  return new AppError(
    429,
    'rate_limited',
    `Rate limit of ${r.limit} ${what} per ${r.window} exceeded; retry in ${seconds} s`,
    { retryAfterSeconds: seconds },
  )
}

/**
 * An organization's allowance per second: twice its average rate, so a minute's allowance cannot
 * arrive in one burst (what the ingest then has to absorb at once), but never less than one
 * whole largest intake.
 */
const perSecond = (perMinute: number, atLeast: number) => Math.max(atLeast, Math.ceil((2 * perMinute) / 60))

/**
 * Request limits with the IETF RateLimit headers on every answer and Retry-After on 429, per
 * the key `keyOf` names (the instance-admin API has one).
 */
export function rateLimitHook(
  limiter: RateLimiter,
  limitPerMinute: number,
  keyOf: (request: FastifyRequest) => string,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const r = await limiter.hit(keyOf(request), limitPerMinute)
    rateLimitHeaders(reply, r)
    if (!r.allowed) throw limited('requests', r)
  }
}

/** The IETF RateLimit headers of a requests window. */
function rateLimitHeaders(reply: FastifyReply, r: { limit: number; remaining: number; resetMs: number }) {
  reply.header('RateLimit-Limit', r.limit)
  reply.header('RateLimit-Remaining', r.remaining)
  reply.header('RateLimit-Reset', Math.max(1, Math.ceil(r.resetMs / 1000)))
}

const eventsKey = (organizationId: string) => `org-events:${organizationId}`

export interface OrganizationLimits {
  requestsPerMinute: number
  eventsPerMinute: number
  bytesPerMinute: number
  /** The largest intake: the per-second allowances never refuse one alone. */
  maxIntakeEvents: number
  maxIntakeBytes: number
}

/**
 * What one organization may send per minute, whichever of its keys it uses: requests (the
 * RateLimit headers tell them), request-body bytes and intake events — the last two, what loads
 * the pipeline, also at most twice their average rate in any one second; 429 with Retry-After
 * past any. Windows are shared by every API process through Redis when REDIS_URL is set.
 */
export function organizationLimits(limiter: RateLimiter, limits: OrganizationLimits) {
  const bytesPerSecond = perSecond(limits.bytesPerMinute, limits.maxIntakeBytes)
  const eventsPerSecond = perSecond(limits.eventsPerMinute, limits.maxIntakeEvents)
  const bytes = async (organizationId: string, n: number) => {
    if (n <= 0) return
    const r = await limiter.hit(`org-bytes:${organizationId}`, limits.bytesPerMinute, {
      cost: n,
      perSecond: bytesPerSecond,
    })
    if (!r.allowed) throw limited('bytes of request bodies', r)
  }
  /** Bytes read so far of bodies sent without Content-Length. */
  const unannounced = new WeakMap<FastifyRequest, { bytes: number }>()
  return {
    /**
     * After authentication, in one round trip: counts the request, its body's bytes when
     * Content-Length says, and for an intake route looks whether the organization has events left.
     */
    onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
      const { organizationId } = principalOf(request)
      const hits: (Hit & { what: string })[] = [
        { key: `org:${organizationId}`, limit: limits.requestsPerMinute, what: 'requests' },
      ]
      const declared = Number(request.headers['content-length'])
      if (Number.isSafeInteger(declared) && declared > 0)
        hits.push({
          key: `org-bytes:${organizationId}`,
          limit: limits.bytesPerMinute,
          cost: declared,
          perSecond: bytesPerSecond,
          what: 'bytes of request bodies',
        })
      // A look, not a count: the events are counted once the body says how many (events()).
      if (request.routeOptions.config?.takesEvents)
        hits.push({
          key: eventsKey(organizationId),
          limit: limits.eventsPerMinute,
          cost: 0,
          perSecond: eventsPerSecond,
          what: 'events',
        })
      const results = await limiter.hitAll(hits)
      rateLimitHeaders(reply, results[0] as RateLimitResult)
      for (const [i, r] of results.entries())
        if (!r.allowed) throw limited((hits[i] as { what: string }).what, r)
    },
    /** A body sent without Content-Length (chunked) is counted as it is read… */
    preParsing: async (request: FastifyRequest, _reply: FastifyReply, payload: NodeJS.ReadableStream) => {
      if (request.headers['content-length'] !== undefined) return payload
      const count = { bytes: 0 }
      unannounced.set(request, count)
      return payload.pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            count.bytes += chunk.length
            done(null, chunk)
          },
        }),
      )
    },
    /** …and checked once read. */
    preValidation: async (request: FastifyRequest) => {
      const count = unannounced.get(request)
      if (count) await bytes(principalOf(request).organizationId, count.bytes)
    },
    /** Counts intake events; throws the 429 when the organization is over its events. */
    async events(organizationId: string, n: number): Promise<void> {
      const r = await limiter.hit(eventsKey(organizationId), limits.eventsPerMinute, {
        cost: n,
        perSecond: eventsPerSecond,
      })
      if (!r.allowed) throw limited('events', r)
    },
  }
}

export type OrganizationRateLimits = ReturnType<typeof organizationLimits>
