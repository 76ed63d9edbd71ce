import { isIPv6 } from 'node:net'
import type { FastifyReply } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import type { RateLimiter } from './rate-limiter.ts'

/** Addresses over the limit that this process remembers, so that their requests cost nothing. */
const MAX_REMEMBERED = 10_000

/**
 * Counts failed authentications per client address in the rate limiter's one-minute windows
 * (shared by every API process through Redis, when configured). Past `perMinute` the address is
 * answered 429 until its window ends, whatever key it sends: telling a valid key from a guess
 * takes the very Postgres look-up the limit is there to spare.
 */
export function createAuthFailureLimit(limiter: RateLimiter, perMinute: number) {
  const overUntil = new Map<string, number>()

  /** How long `ip` stays over the limit, in ms; undefined when it is not. */
  function blockedFor(ip: string): number | undefined {
    const address = clientKey(ip)
    const until = overUntil.get(address)
    if (until === undefined) return undefined
    const left = until - Date.now()
    if (left > 0) return left
    overUntil.delete(address)
    return undefined
  }

  /** Counts a failure of `ip`: how long it is now over the limit, in ms, or undefined. */
  async function countFailure(ip: string): Promise<number | undefined> {
    const address = clientKey(ip)
    const window = await limiter.hit(`auth-failures:${address}`, perMinute)
    if (window.allowed) return undefined
    const oldest = overUntil.keys().next()
    if (overUntil.size >= MAX_REMEMBERED && !oldest.done) overUntil.delete(oldest.value)
    overUntil.set(address, Date.now() + window.resetMs)
    return window.resetMs
  }

  const refusal = (reply: FastifyReply, ms: number) => {
    const seconds = retryAfterSeconds(ms)
    reply.header('Retry-After', seconds)
    return new AppError(
      429,
      'too_many_auth_failures',
      `More than ${perMinute} failed authentications in a minute from this address; retry in ${seconds} s`,
    )
  }

  return {
    perMinute,
    blockedFor,
    countFailure,
    /** Throws the 429 while `ip` is over the limit. */
    check(ip: string, reply: FastifyReply): void {
      const left = blockedFor(ip)
      if (left !== undefined) throw refusal(reply, left)
    },

    /** Counts a failure of `ip`: the 429 to answer instead of the 401 once it is over the limit. */
    async failed(ip: string, reply: FastifyReply): Promise<AppError | undefined> {
      const left = await countFailure(ip)
      return left === undefined ? undefined : refusal(reply, left)
    },
  }
}

export const retryAfterSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

export type AuthFailureLimit = ReturnType<typeof createAuthFailureLimit>

/**
 * The client a limit counts: an IPv4 address (also when mapped into IPv6), or an IPv6 address's
 * /64, the block one subscriber is usually given whole.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped?.[1]) return mapped[1]
  if (!isIPv6(ip)) return ip
  const [head = '', tail] = (ip.split('%')[0] ?? '').split('::')
  const groups = (part: string | undefined) => (part ? part.split(':') : [])
  const left = groups(head)
  const right = groups(tail)
  // A dotted IPv4 ending counts as two groups.
  const rightGroups = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0)
  const all = [...left, ...Array<string>(8 - left.length - rightGroups).fill('0'), ...right]
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`
}
