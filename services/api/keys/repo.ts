import { z } from 'zod'
import { createCapped, type Sql, type TxSql, transaction } from '../../shared/postgres.ts'
import type { Principal } from '../http/auth.ts'
import { apiKey, type keyRole } from './schemas.ts'
import { generateKeySecret, hashKey, keyPrefix } from './secret.ts'

type KeyRole = z.output<typeof keyRole>

/** A key as stored, less its hash: what the key routes answer, and its organization. */
const apiKeyRow = apiKey.extend({ organization_id: z.uuid() })
export type ApiKeyRow = z.output<typeof apiKeyRow>

export const API_KEYS_CHANNEL = 'tally_api_keys'

export function createApiKeyRepo(sql: Sql) {
  return {
    async findPrincipal(secret: string): Promise<Principal | null> {
      const [row] = await sql<Pick<ApiKeyRow, 'id' | 'organization_id' | 'role'>[]>`
        select id, organization_id, role from api_keys where key_hash = ${hashKey(secret)}`
      return row ? { organizationId: row.organization_id, keyId: row.id, role: row.role } : null
    },

    /** Creates a key; the secret is in the result and nowhere else. */
    async create(
      input: { organizationId: string; name: string; role: KeyRole; secret?: string },
      tx: Sql | TxSql = sql,
    ): Promise<{ key: ApiKeyRow; secret: string }> {
      const secret = input.secret ?? generateKeySecret()
      const [key] = await tx<ApiKeyRow[]>`
        insert into api_keys (organization_id, name, key_hash, key_prefix, role)
        values (${input.organizationId}, ${input.name}, ${hashKey(secret)}, ${keyPrefix(secret)}, ${input.role})
        returning id, organization_id, name, key_prefix, role, created_at`
      return { key: key as ApiKeyRow, secret }
    },

    /**
     * Creates a key unless the organization already holds `max`. Creations of one organization
     * take turns (its row is locked), so two at once never pass the cap together.
     */
    async createCapped(
      input: { organizationId: string; name: string; role: KeyRole },
      max: number,
    ): Promise<{ key: ApiKeyRow; secret: string } | { held: number }> {
      return createCapped(sql, 'api_keys', input.organizationId, max, (tx) => this.create(input, tx))
    },

    async list(organizationId: string): Promise<ApiKeyRow[]> {
      return sql<ApiKeyRow[]>`
        select id, organization_id, name, key_prefix, role, created_at
        from api_keys where organization_id = ${organizationId} order by created_at, id`
    },

    /**
     * Deletes the key and tells every process to forget it, unless it is the organization's last
     * admin key. Every admin key of the organization is locked first, in id order, so deletions
     * take turns: two admin keys deleting each other at once leave one.
     */
    async delete(
      organizationId: string,
      id: string,
    ): Promise<{ deleted: string } | 'not_found' | 'last_admin_key'> {
      return transaction(sql, async (tx) => {
        const admins = await tx<{ id: string }[]>`
          select id from api_keys where organization_id = ${organizationId} and role = 'admin'
          order by id for update`
        if (admins.length === 1 && admins[0]?.id === id) return 'last_admin_key'
        const [row] = await tx<{ key_hash: Buffer }[]>`
          delete from api_keys where organization_id = ${organizationId} and id = ${id} returning key_hash`
        if (!row) return 'not_found'
        const hash = row.key_hash.toString('hex')
        await tx`select pg_notify(${API_KEYS_CHANNEL}, ${hash})`
        return { deleted: hash }
      })
    },

    /** A new organization with its first (admin) key. */
    async createOrganization(name: string, keySecret?: string) {
      return transaction(sql, async (tx) => {
        type Created = { id: string; name: string; created_at: Date; retention_days: number | null }
        const [org] = await tx<Created[]>`
          insert into organizations (name) values (${name}) returning id, name, created_at, retention_days`
        const organization = org as Created
        const created = await this.create(
          {
            organizationId: organization.id,
            name: 'admin',
            role: 'admin',
            ...(keySecret ? { secret: keySecret } : {}),
          },
          tx,
        )
        return { organization, ...created }
      })
    },

    async countOrganizations(): Promise<number> {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from organizations`
      return row?.n ?? 0
    },
  }
}

export type ApiKeyRepo = ReturnType<typeof createApiKeyRepo>
