import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { deleteOrganizationRows } from '../../shared/clickhouse/organization-rows.ts'
import { recordDeletion } from '../../shared/deleted-organizations.ts'
import { type Sql, type TxSql, transaction } from '../../shared/postgres.ts'
import { announceWebhookChange } from '../../shared/webhooks/directory.ts'
import type { Page } from '../http/paging.ts'
import { API_KEYS_CHANNEL } from '../keys/interface.ts'
import type { Organization } from './schemas.ts'

/** Organizations across the instance, for the instance-admin API. */
export function createOrganizationRepo(sql: Sql, clickhouse: ClickHouseClient) {
  /** Locks the organization's row; false when there is none. */
  async function lock(tx: TxSql, id: string): Promise<boolean> {
    const [row] = await tx`select 1 from organizations where id = ${id} for update`
    return row !== undefined
  }

  /** Deletes the organization's API keys and tells every process to forget them; their hashes (hex). */
  async function deleteKeys(tx: TxSql, id: string): Promise<string[]> {
    const rows = await tx<{ key_hash: Buffer }[]>`
      delete from api_keys where organization_id = ${id} returning key_hash`
    const hashes = rows.map((row) => row.key_hash.toString('hex'))
    for (const hash of hashes) await tx`select pg_notify(${API_KEYS_CHANNEL}, ${hash})`
    return hashes
  }

  /** Deletes the organization's webhooks (their deliveries cascade) and tells every dispatcher. */
  async function deleteWebhooks(tx: TxSql, id: string): Promise<void> {
    const webhooks = await tx<
      { id: string }[]
    >`delete from webhooks where organization_id = ${id} returning id`
    for (const webhook of webhooks) await announceWebhookChange(tx, id, webhook.id)
  }

  return {
    async list(page: Page): Promise<Organization[]> {
      return sql<Organization[]>`
        select id, name, created_at, retention_days from organizations
        order by created_at, id offset ${page.offset} limit ${page.limit}`
    },

    /**
     * Sets the organization's own retention (null: the instance's), in `tx`; the organization as it
     * is then, or null when there is none (or it is being deleted).
     */
    async setRetention(tx: TxSql, id: string, days: number | null): Promise<Organization | null> {
      const [row] = await tx<Organization[]>`
        update organizations set retention_days = ${days}
        where id = ${id} and not exists (select 1 from deleted_organizations d where d.organization_id = organizations.id)
        returning id, name, created_at, retention_days`
      return row ?? null
    },

    /**
     * The first step of a deletion: the organization is recorded as deleted (its events still in
     * Kafka are dropped, its exports stop), its keys stop working, so nothing new is written for
     * it, and its webhooks go with their deliveries, so nothing more is sent for it while the
     * deletion waits for its exports. The keys' hashes (hex), or null when there is no such
     * organization.
     */
    async beginDeletion(id: string): Promise<string[] | null> {
      return transaction(sql, async (tx) => {
        if (!(await lock(tx, id))) return null
        await recordDeletion(tx, id)
        await deleteWebhooks(tx, id)
        return deleteKeys(tx, id)
      })
    },

    /** The object-storage keys of the organization's prompt bodies. */
    async promptBodyKeys(id: string): Promise<string[]> {
      const rows = await sql<{ storage_key: string }[]>`
        select storage_key from prompt_versions where organization_id = ${id}`
      return rows.map((row) => row.storage_key)
    },

    /** Deletes the organization's rows from every ClickHouse table that has them; the tables. */
    deleteClickHouseRows: (id: string): Promise<string[]> => deleteOrganizationRows(clickhouse, id),

    /**
     * The last step: the organization's row, and through the cascades every Postgres row of it
     * (keys, prompts, versions, environments, webhooks, deliveries, attempts). Keys and webhooks
     * are announced so that every process drops its cached copies. Returns the key hashes and
     * prompt-body keys that were still there, or null when the organization was already gone.
     */
    async deleteRows(id: string): Promise<{ keyHashes: string[]; bodyKeys: string[] } | null> {
      return transaction(sql, async (tx) => {
        if (!(await lock(tx, id))) return null
        const keyHashes = await deleteKeys(tx, id)
        const bodies = await tx<{ storage_key: string }[]>`
          select storage_key from prompt_versions where organization_id = ${id}`
        await deleteWebhooks(tx, id)
        await tx`delete from organizations where id = ${id}`
        return { keyHashes, bodyKeys: bodies.map((row) => row.storage_key) }
      })
    },
  }
}

export type OrganizationRepo = ReturnType<typeof createOrganizationRepo>
