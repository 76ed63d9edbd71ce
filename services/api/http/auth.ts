import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import type { Sql } from '../../shared/postgres.ts'
import { API_KEYS_CHANNEL, type ApiKeyRepo, type Principal } from '../keys/repo.ts'
import { hashKey } from '../keys/secret.ts'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
}

const POSITIVE_TTL_MS = 60_000
const NEGATIVE_TTL_MS = 5_000
const MAX_KNOWN = 50_000
const MAX_UNKNOWN = 10_000

export const unauthorized = () =>
  new AppError(401, 'unauthorized', 'Missing or invalid API key: send Authorization: Bearer <API_KEY>')

/**
 * Resolves `Authorization: Bearer <key>` to its organization. Look-ups are cached briefly; a
 * deleted key is dropped from every process's cache at once through Postgres NOTIFY.
 */
export async function createAuthenticator(repo: ApiKeyRepo, sql: Sql, log: Logger) {
  // Known keys and unknown tokens are cached apart, so a flood of made-up tokens can only
  // evict other made-up tokens, never the keys real callers use.
  const known = new Map<string, { principal: Principal; expires: number }>()
  const unknown = new Map<string, number>()
  const forget = (hash: string) => {
    known.delete(hash)
    unknown.delete(hash)
  }
  const listener = await sql.listen(API_KEYS_CHANNEL, forget, () => known.clear())

  async function authenticate(header: string | undefined): Promise<Principal> {
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
    if (!match) throw unauthorized()
    const secret = match[1] as string
    const hash = hashKey(secret).toString('hex')
    const now = Date.now()
    const hit = known.get(hash)
    if (hit && hit.expires > now) return hit.principal
    const missUntil = unknown.get(hash)
    if (missUntil !== undefined && missUntil > now) throw unauthorized()
    const principal = await repo.findPrincipal(secret)
    if (principal) {
      if (known.size >= MAX_KNOWN) known.clear()
      known.set(hash, { principal, expires: now + POSITIVE_TTL_MS })
    } else {
      if (unknown.size >= MAX_UNKNOWN) unknown.clear()
      unknown.set(hash, now + NEGATIVE_TTL_MS)
    }
    if (!principal) throw unauthorized()
    return principal
  }

  return {
    /** Forgets a key at once in this process; other processes hear it through NOTIFY. */
    forget,
    async hook(request: FastifyRequest, _reply: FastifyReply) {
      request.principal = await authenticate(request.headers.authorization)
    },
    async close() {
      await listener.unlisten().catch((err: unknown) => log.warn({ err }, 'auth_unlisten_failed'))
    },
  }
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
