import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import type { AuthFailureLimit } from './auth-failures.ts'

/** The key a request authenticated with: the organization it acts for, and what it may do. */
export interface Principal {
  organizationId: string
  keyId: string
  role: 'admin' | 'member'
}

/** Who holds an API key: the keys' look-up (keys/principals.ts), given in by app.ts. */
export interface PrincipalLookup {
  find(secret: string): Promise<Principal | null>
}

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

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/** Whether a token is the instance-admin key: their SHA-256 digests compared, equal lengths, constant time. */
function adminKeyMatcher(adminKey: string | undefined) {
  const expected = adminKey === undefined ? null : sha256(adminKey)
  return (token: string) => expected !== null && timingSafeEqual(sha256(token), expected)
}

/**
 * Resolves `Authorization: Bearer <key>` to its organization through `principals`. The
 * instance-admin key is refused here even if an organization's key had the same secret. Failures
 * count against the client's address; past the limit it is answered 429 before any look-up.
 */
export function authHook(
  principals: PrincipalLookup,
  adminKey: string | undefined,
  failures: AuthFailureLimit,
) {
  const isAdminKey = adminKeyMatcher(adminKey)

  async function authenticate(header: string | undefined): Promise<Principal | null> {
    const secret = bearerToken(header)
    if (!secret || isAdminKey(secret)) return null
    return principals.find(secret)
  }

  return async (request: FastifyRequest, reply: FastifyReply) => {
    failures.check(request.ip, reply)
    request.principal = await authenticate(authorizationOf(request))
    if (!request.principal) throw (await failures.failed(request.ip, reply)) ?? unauthorized()
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
    if (!token || !isAdminKey(token)) throw (await failures.failed(request.ip, reply)) ?? unauthorizedAdmin()
  }
}
