import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import { createNotifiedCache } from '../../shared/notified-cache.ts'
import type { Sql } from '../../shared/postgres.ts'
import { API_KEYS_CHANNEL, type ApiKeyRepo, type Principal } from '../keys/repo.ts'
import { hashKey } from '../keys/secret.ts'
import type { AuthFailureLimit } from './auth-failures.ts'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** The route also takes the key as `X-Tally-Api-Key: <key>` (OTLP exporters set headers, not schemes). */
    apiKeyHeader?: boolean
  }
}

const unauthorized = () =>
  new AppError(401, 'unauthorized', 'Missing or invalid API key: send Authorization: Bearer <API_KEY>')

const unauthorizedAdmin = () =>
  new AppError(
    401,
    'unauthorized',
    'Missing or invalid admin API key: send Authorization: Bearer <TALLY_ADMIN_API_KEY>',
  )

function bearerToken(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
  return match ? (match[1] as string) : null
}

/** Whether a token's SHA-256 digest is the instance-admin key's: equal lengths, constant time. */
function adminKeyMatcher(adminKey: string | undefined) {
  const expected = adminKey === undefined ? null : hashKey(adminKey)
  return (digest: Buffer) => expected !== null && timingSafeEqual(digest, expected)
}

/**
 * Resolves `Authorization: Bearer <key>` to its organization. Look-ups are cached briefly; a
 * deleted key is dropped from every process's cache at once through Postgres NOTIFY. The
 * instance-admin key is refused here even if an organization's key had the same secret. Failures
 * count against the client's address; past the limit it is answered 429 before any look-up.
 */
export async function createAuthenticator(
  repo: ApiKeyRepo,
  sql: Sql,
  log: Logger,
  adminKey: string | undefined,
  failures: AuthFailureLimit,
) {
  const isAdminKey = adminKeyMatcher(adminKey)
  // By key hash. Unknown tokens are cached apart from known keys, so a flood of made-up tokens
  // can only evict other made-up tokens, never the keys real callers use.
  const principals = await createNotifiedCache<Principal>(sql, log, {
    channel: API_KEYS_CHANNEL,
    name: 'auth',
    ttlMs: 60_000,
    maxEntries: 50_000,
    misses: { ttlMs: 5_000, maxEntries: 10_000 },
  })

  async function authenticate(header: string | undefined): Promise<Principal | null> {
    const secret = bearerToken(header)
    if (!secret) return null
    const digest = hashKey(secret)
    if (isAdminKey(digest)) return null
    return principals.get(digest.toString('hex'), () => repo.findPrincipal(secret))
  }

  return {
    /** Forgets a key (by hash) at once in this process; other processes hear it through NOTIFY. */
    forget: principals.forget,
    async hook(request: FastifyRequest, reply: FastifyReply) {
      failures.check(request.ip, reply)
      request.principal = await authenticate(authorizationOf(request))
      if (!request.principal) throw (await failures.failed(request.ip, reply)) ?? unauthorized()
    },
    close: principals.close,
  }
}

/** The Authorization header, or on routes that allow it, X-Tally-Api-Key as a bearer token. */
function authorizationOf(request: FastifyRequest): string | undefined {
  const given = request.headers.authorization
  if (given !== undefined || !request.routeOptions.config?.apiKeyHeader) return given
  const key = request.headers['x-tally-api-key']
  return typeof key === 'string' ? `Bearer ${key.trim()}` : undefined
}

/** The caller's identity inside an authenticated route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized()
  return request.principal
}

export function requireAdmin(request: FastifyRequest): Principal {
  const principal = principalOf(request)
  if (principal.role !== 'admin')
    throw new AppError(403, 'forbidden', 'This API key is not an admin key of its organization')
  return principal
}

/**
 * Admits only `Authorization: Bearer <TALLY_ADMIN_API_KEY>`; organizations' keys get 401. Failures
 * count against the client's address like those on organization routes.
 */
export function adminAuthHook(adminKey: string, failures: AuthFailureLimit) {
  const isAdminKey = adminKeyMatcher(adminKey)
  return async (request: FastifyRequest, reply: FastifyReply) => {
    failures.check(request.ip, reply)
    const token = bearerToken(request.headers.authorization)
    if (!token || !isAdminKey(hashKey(token)))
      throw (await failures.failed(request.ip, reply)) ?? unauthorizedAdmin()
  }
}
