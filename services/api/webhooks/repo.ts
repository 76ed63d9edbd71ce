import { createCapped, type Sql, type TxSql, transaction } from '../../shared/postgres.ts'
import { announceWebhookChange } from '../../shared/webhooks/directory.ts'
import {
  DEFAULT_WEBHOOK_EVENTS,
  type PropertyFilter,
  type WebhookEvent,
} from '../../shared/webhooks/payload.ts'
import { generateHmacKey } from '../../shared/webhooks/signature.ts'
import { newestFirst, type PagePosition, type PostgresPage } from '../http/cursor.ts'
import { type DeliveryRow, type WebhookRow, webhookRow } from './schemas.ts'

/** How long a replaced key keeps signing beside the new one. */
const KEY_OVERLAP_MS = 24 * 3_600_000

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const isUuid = (id: string) => UUID.test(id)

interface NewWebhook {
  organizationId: string
  destination: string
  /** Default: request.completed alone. */
  events?: readonly WebhookEvent[]
  sampleRate: number
  propertyFilters: PropertyFilter[]
  /** A filter tree, checked by the caller; undefined: none. */
  filter?: unknown
  includeData: boolean
}

export function createWebhookRepo(sql: Sql) {
  const columns = sql(Object.keys(webhookRow.shape))
  const insert = async (tx: TxSql, input: NewWebhook) => {
    const hmacKey = generateHmacKey()
    const [row] = await tx`
      insert into webhooks (organization_id, destination, events, sample_rate, property_filters, filter_tree,
                            include_data, hmac_key)
      values (${input.organizationId}, ${input.destination}, ${[...(input.events ?? DEFAULT_WEBHOOK_EVENTS)]}::text[], ${input.sampleRate},
              ${tx.json(input.propertyFilters as unknown as Parameters<typeof tx.json>[0])},
              ${input.filter === undefined ? null : tx.json(input.filter as Parameters<typeof tx.json>[0])},
              ${input.includeData}, ${hmacKey})
      returning ${columns}`
    const webhook = webhookRow.parse(row)
    await announceWebhookChange(tx, input.organizationId, webhook.id)
    return { webhook, hmacKey }
  }
  const deliveryColumns = sql`id, request_id, coalesce(event_key, request_id::text) as event_key, event, status, attempts, last_attempt_at, last_response_status,
    last_response_body, last_error, last_duration_ms,
    case when status = 'pending' then next_attempt_at end as next_attempt_at, created_at, delivered_at`

  return {
    /** Creates a webhook; its key is in the result and nowhere else. */
    async create(input: NewWebhook): Promise<{ webhook: WebhookRow; hmacKey: string }> {
      return transaction(sql, (tx) => insert(tx, input))
    },

    /**
     * Creates a webhook unless the organization already holds `max`. Creations of one
     * organization take turns (its row is locked), so two at once never pass the cap together.
     */
    async createCapped(
      input: NewWebhook,
      max: number,
    ): Promise<{ webhook: WebhookRow; hmacKey: string } | { held: number }> {
      return createCapped(sql, 'webhooks', input.organizationId, max, (tx) => insert(tx, input))
    },

    async list(organizationId: string): Promise<WebhookRow[]> {
      const rows = await sql`
        select ${columns} from webhooks where organization_id = ${organizationId} order by created_at, id`
      return webhookRow.array().parse(rows)
    },

    async get(organizationId: string, id: string): Promise<WebhookRow | null> {
      if (!isUuid(id)) return null
      const [row] = await sql`
        select ${columns} from webhooks where organization_id = ${organizationId} and id = ${id}`
      return row ? webhookRow.parse(row) : null
    },

    /** Deletes the webhook with its deliveries; every dispatcher forgets it at once. */
    async delete(organizationId: string, id: string): Promise<boolean> {
      if (!isUuid(id)) return false
      return transaction(sql, async (tx) => {
        const rows =
          await tx`delete from webhooks where organization_id = ${organizationId} and id = ${id} returning id`
        if (rows.length === 0) return false
        await announceWebhookChange(tx, organizationId, id)
        return true
      })
    },

    /**
     * A new key; the current one keeps signing beside it until the overlap ends. Refused while an
     * overlap is running: X-Service-Signature uses the oldest active key, and a second rotation
     * would switch it to a key the receiver may never have stored. An expired previous key is
     * replaced here, and every read ignores it once expired.
     */
    async rotateKey(
      organizationId: string,
      id: string,
    ): Promise<
      | { rotated: true; hmacKey: string; previousKeyExpiresAt: Date }
      | { rotated: false; overlapEndsAt: Date }
      | null
    > {
      if (!isUuid(id)) return null
      const hmacKey = generateHmacKey()
      return transaction(sql, async (tx) => {
        const [current] = await tx<{ overlap_ends_at: Date | null }[]>`
          select case when previous_key_expires_at > now() then previous_key_expires_at end as overlap_ends_at
          from webhooks where organization_id = ${organizationId} and id = ${id}
          for update`
        if (!current) return null
        if (current.overlap_ends_at)
          return { rotated: false as const, overlapEndsAt: current.overlap_ends_at }
        const [row] = await tx<{ previous_key_expires_at: Date }[]>`
          update webhooks set previous_hmac_key = hmac_key, hmac_key = ${hmacKey},
            previous_key_expires_at = now() + make_interval(secs => ${KEY_OVERLAP_MS / 1000})
          where organization_id = ${organizationId} and id = ${id}
          returning previous_key_expires_at`
        await announceWebhookChange(tx, organizationId, id)
        return {
          rotated: true as const,
          hmacKey,
          previousKeyExpiresAt: (row as { previous_key_expires_at: Date }).previous_key_expires_at,
        }
      })
    },

    /** The signing keys in effect, newest first. */
    async activeKeys(id: string): Promise<string[]> {
      const [row] = await sql<{ hmac_key: string; previous: string | null }[]>`
        select hmac_key, case when previous_key_expires_at > now() then previous_hmac_key end as previous
        from webhooks where id = ${id}`
      return row ? [row.hmac_key, ...(row.previous ? [row.previous] : [])] : []
    },

    /** One page, newest first, past `offset` rows or after `after` (newestFirst, http/cursor.ts). */
    async listDeliveries(
      webhookId: string,
      page: PostgresPage<DeliveryRow['status']>,
    ): Promise<{ record: DeliveryRow; position: PagePosition }[]> {
      const rows = await sql<(DeliveryRow & { page_created_at: string })[]>`
        select ${deliveryColumns}, created_at::text as page_created_at from webhook_deliveries
        where webhook_id = ${webhookId} ${newestFirst(sql, page)}`
      return rows.map(({ page_created_at, ...record }) => ({
        record: record as DeliveryRow,
        position: { createdAt: page_created_at, id: record.id },
      }))
    },

    /**
     * Makes a delivery due now with a fresh schedule; a webhook disabled by 410 is enabled again,
     * since asking for a retry says the receiver is back.
     */
    async retryDelivery(
      organizationId: string,
      webhookId: string,
      deliveryId: string,
    ): Promise<DeliveryRow | null> {
      if (!isUuid(deliveryId)) return null
      return transaction(sql, async (tx) => {
        const [row] = await tx<DeliveryRow[]>`
          update webhook_deliveries set status = 'pending', round_attempts = 0, next_attempt_at = now(),
            claim_token = null, delivered_at = null
          where id = ${deliveryId} and webhook_id = ${webhookId}
          returning ${deliveryColumns}`
        if (!row) return null
        const enabled = await tx`
          update webhooks set state = 'active', disabled_reason = null
          where id = ${webhookId} and state = 'disabled' returning id`
        if (enabled.length > 0) await announceWebhookChange(tx, organizationId, webhookId)
        return row
      })
    },
  }
}
