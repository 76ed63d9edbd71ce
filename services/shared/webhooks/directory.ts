import type { Logger } from '../logger.ts'
import type { Sql, TxSql } from '../postgres.ts'
import type { PropertyFilter } from './payload.ts'

/** Every change to a webhook is announced here with its id, so every process drops its copy at once. */
export const WEBHOOKS_CHANNEL = 'tally_webhooks'

export interface WebhookTarget {
  id: string
  organizationId: string
  destination: string
  sampleRate: number
  propertyFilters: PropertyFilter[]
  includeData: boolean
  active: boolean
  hmacKey: string
  previousHmacKey: string | null
  previousKeyExpiresAt: Date | null
}

interface Row {
  id: string
  organization_id: string
  destination: string
  sample_rate: number
  property_filters: PropertyFilter[]
  include_data: boolean
  state: string
  hmac_key: string
  previous_hmac_key: string | null
  previous_key_expires_at: Date | null
}

const TTL_MS = 30_000
const MAX_ORGANIZATIONS = 50_000

/** The signing keys in effect now, newest first. */
export function activeKeys(target: WebhookTarget, now = Date.now()): string[] {
  const previous =
    target.previousHmacKey && target.previousKeyExpiresAt && target.previousKeyExpiresAt.getTime() > now
      ? [target.previousHmacKey]
      : []
  return [target.hmacKey, ...previous]
}

/**
 * A cache of webhooks by organization and by id, read in one query per batch for whatever is
 * missing. Changes arrive through NOTIFY; the TTL only covers a missed notification.
 */
export async function createWebhookDirectory(sql: Sql, log: Logger) {
  const byOrganization = new Map<string, { targets: WebhookTarget[]; expires: number }>()
  const byId = new Map<string, { target: WebhookTarget; expires: number }>()
  const loads = new Map<string, Promise<WebhookTarget[]>>()

  const forget = (webhookId: string) => {
    const hit = byId.get(webhookId)
    byId.delete(webhookId)
    if (hit) byOrganization.delete(hit.target.organizationId)
  }
  const listener = await sql.listen(
    WEBHOOKS_CHANNEL,
    (payload) => {
      const { organizationId, webhookId } = JSON.parse(payload) as {
        organizationId: string
        webhookId: string
      }
      byOrganization.delete(organizationId)
      forget(webhookId)
    },
    () => {
      byOrganization.clear()
      byId.clear()
    },
  )

  const remember = (rows: Row[], expires: number) => {
    const targets = rows.map(toTarget)
    for (const target of targets) byId.set(target.id, { target, expires })
    return targets
  }

  return {
    /** The webhooks of each organization (active and disabled). */
    async forOrganizations(organizationIds: string[]): Promise<Map<string, WebhookTarget[]>> {
      const now = Date.now()
      const out = new Map<string, WebhookTarget[]>()
      const missing: string[] = []
      for (const id of organizationIds) {
        const hit = byOrganization.get(id)
        if (hit && hit.expires > now) out.set(id, hit.targets)
        else missing.push(id)
      }
      if (missing.length === 0) return out
      const rows = await sql<Row[]>`
        select id, organization_id, destination, sample_rate, property_filters, include_data, state,
               hmac_key, previous_hmac_key, previous_key_expires_at
        from webhooks where organization_id = any(${missing}::uuid[])`
      const expires = now + TTL_MS
      if (byOrganization.size >= MAX_ORGANIZATIONS) byOrganization.clear()
      for (const id of missing) out.set(id, [])
      for (const target of remember(rows, expires)) out.get(target.organizationId)?.push(target)
      for (const id of missing) byOrganization.set(id, { targets: out.get(id) ?? [], expires })
      return out
    },

    /** The webhooks with these ids; a deleted one is absent from the answer. */
    async byIds(ids: string[]): Promise<Map<string, WebhookTarget>> {
      const now = Date.now()
      const out = new Map<string, WebhookTarget>()
      const missing: string[] = []
      for (const id of new Set(ids)) {
        const hit = byId.get(id)
        if (hit && hit.expires > now) out.set(id, hit.target)
        else missing.push(id)
      }
      if (missing.length === 0) return out
      // Many attempts of one webhook miss together after a change: one query serves them all.
      const key = missing.join(',')
      let loading = loads.get(key)
      if (!loading) {
        loading = sql<Row[]>`
          select id, organization_id, destination, sample_rate, property_filters, include_data, state,
                 hmac_key, previous_hmac_key, previous_key_expires_at
          from webhooks where id = any(${missing}::uuid[])`.then((rows) => {
          if (byId.size >= MAX_ORGANIZATIONS * 4) byId.clear()
          return remember(rows, Date.now() + TTL_MS)
        })
        loads.set(key, loading)
        void loading.finally(() => loads.delete(key)).catch(() => {})
      }
      for (const target of await loading) out.set(target.id, target)
      return out
    },

    /** The cached webhook, if this process still holds an unexpired copy (no I/O). */
    cached(id: string): WebhookTarget | undefined {
      const hit = byId.get(id)
      return hit && hit.expires > Date.now() ? hit.target : undefined
    },

    async close() {
      await listener.unlisten().catch((err: unknown) => log.warn({ err }, 'webhooks_unlisten_failed'))
    },
  }
}

export type WebhookDirectory = Awaited<ReturnType<typeof createWebhookDirectory>>

function toTarget(row: Row): WebhookTarget {
  return {
    id: row.id,
    organizationId: row.organization_id,
    destination: row.destination,
    sampleRate: row.sample_rate,
    propertyFilters: row.property_filters,
    includeData: row.include_data,
    active: row.state === 'active',
    hmacKey: row.hmac_key,
    previousHmacKey: row.previous_hmac_key,
    previousKeyExpiresAt: row.previous_key_expires_at,
  }
}

/** Tells every process that a webhook changed. Call inside the transaction that changed it. */
export async function announceWebhookChange(
  tx: Sql | TxSql,
  organizationId: string,
  webhookId: string,
): Promise<void> {
  await tx`select pg_notify(${WEBHOOKS_CHANNEL}, ${JSON.stringify({ organizationId, webhookId })})`
}
