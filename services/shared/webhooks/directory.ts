import { z } from 'zod'
import type { Logger } from '../logger.ts'
import { createNotifiedCache } from '../notified-cache.ts'
import type { Sql, TxSql } from '../postgres.ts'
import { webhookFilter } from './filter.ts'
import { webhookRowSchema } from './webhook-row.ts'

/** Every change to a webhook is announced here with its id, so every process drops its copy at once. */
const WEBHOOKS_CHANNEL = 'tally_webhooks'

const targetRowSchema = webhookRowSchema.omit({ disabled_reason: true, created_at: true })

/** A webhook as the dispatcher sees it: where to send, what to send, how to sign. */
const webhookTargetSchema = targetRowSchema.transform((row) => ({
  id: row.id,
  organizationId: row.organization_id,
  destination: row.destination,
  sampleRate: row.sample_rate,
  /** propertyFilters and config.filter, as one tree. */
  filter: webhookFilter(row.property_filters, row.filter_tree),
  includeData: row.include_data,
  /** The events it subscribes to: `request.completed` unless it asked for more. */
  events: new Set<string>(row.events) as ReadonlySet<string>,
  active: row.state === 'active',
  hmacKey: row.hmac_key,
  previousHmacKey: row.previous_hmac_key,
  previousKeyExpiresAt: row.previous_key_expires_at,
}))
const targetsSchema = z.array(webhookTargetSchema)

export type WebhookTarget = z.output<typeof webhookTargetSchema>

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
 * missing. Changes arrive through NOTIFY and forget the organization's webhooks; the TTL only
 * covers a missed notification.
 */
export async function createWebhookDirectory(sql: Sql, log: Logger) {
  const cache = <V>(maxEntries: number, groupOf?: (value: V) => string) =>
    createNotifiedCache<V>(sql, log, {
      channel: WEBHOOKS_CHANNEL,
      name: 'webhooks',
      ttlMs: 30_000,
      maxEntries,
      groupOfNotice: (payload) => (JSON.parse(payload) as { organizationId: string }).organizationId,
      ...(groupOf ? { groupOf } : {}),
    })
  const byOrganization = await cache<WebhookTarget[]>(50_000)
  const byId = await cache<WebhookTarget>(200_000, (target) => target.organizationId)
  const columns = sql(Object.keys(targetRowSchema.shape))

  return {
    /** The webhooks of each organization (active and disabled). */
    forOrganizations(organizationIds: string[]): Promise<Map<string, WebhookTarget[]>> {
      return byOrganization.getMany(organizationIds, async (missing) => {
        const targets = targetsSchema.parse(
          await sql`select ${columns} from webhooks where organization_id = any(${missing}::uuid[])`,
        )
        const found = new Map(missing.map((id) => [id, [] as WebhookTarget[]]))
        for (const target of targets) found.get(target.organizationId)?.push(target)
        return found
      })
    },

    /** The webhooks with these ids; a deleted one is absent from the answer. */
    byIds(ids: string[]): Promise<Map<string, WebhookTarget>> {
      // Many attempts of one webhook miss together after a change: one query serves them all.
      return byId.getMany(ids, async (missing) => {
        const targets = targetsSchema.parse(
          await sql`select ${columns} from webhooks where id = any(${missing}::uuid[])`,
        )
        return new Map(targets.map((target) => [target.id, target]))
      })
    },

    async close() {
      await Promise.all([byOrganization.close(), byId.close()])
    },
  }
}

export type WebhookDirectory = Awaited<ReturnType<typeof createWebhookDirectory>>

/** Tells every process that a webhook changed. Call inside the transaction that changed it. */
export async function announceWebhookChange(
  tx: Sql | TxSql,
  organizationId: string,
  webhookId: string,
): Promise<void> {
  await tx`select pg_notify(${WEBHOOKS_CHANNEL}, ${JSON.stringify({ organizationId, webhookId })})`
}
