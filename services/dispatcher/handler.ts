import type { DeletedOrganizations } from '../shared/deleted-organizations.ts'
import type { EventHandler } from '../shared/events/handler.ts'
import type { RequestEvent } from '../shared/events/request-event.ts'
import type { Logger } from '../shared/logger.ts'
import { counter } from '../shared/metrics.ts'
import type { DeliveryRepo, NewDelivery } from '../shared/webhooks/deliveries.ts'
import type { WebhookDirectory, WebhookTarget } from '../shared/webhooks/directory.ts'
import { buildPayload, isSampled } from '../shared/webhooks/payload.ts'
import { matchesTree } from './evaluate-filter.ts'
import type { DeliveryWorker } from './worker.ts'

const recorded = counter(
  'tally_webhook_deliveries_recorded_total',
  'Deliveries written for request events (a redelivered event writes none)',
)

/**
 * The dispatcher's side of the event stream: for every event and every active webhook of its
 * organization that samples and filters it in, one delivery row with the exact body bytes. The
 * batch resolves only once the rows are written, so Kafka commits (or the intake acknowledges)
 * only what is durable; a redelivered event conflicts with its rows and is not sent again.
 * Rows this process has room for are claimed as they are written and sent at once.
 */
export function createDispatchHandler(deps: {
  directory: WebhookDirectory
  /** Events of a deleted organization get no delivery. */
  deletions: Pick<DeletedOrganizations, 'among'>
  repo: DeliveryRepo
  worker: DeliveryWorker
  leaseMs: number
  log: Logger
}): EventHandler {
  const { directory, deletions, repo, worker, leaseMs, log } = deps
  // A stored filter this version cannot read matches nothing: said once per webhook and process.
  const warned = new Set<string>()
  const unreadable = (webhookId: string, problem: string) => {
    if (warned.has(webhookId) || warned.size >= 10_000) return
    warned.add(webhookId)
    log.error({ webhookId, problem }, 'webhook_filter_unreadable')
  }
  /**
   * Whether the webhook's filter takes the event. One webhook's filter never stops the stream:
   * one that cannot be decided matches nothing, and the log says why.
   */
  const decide = (webhook: WebhookTarget, event: RequestEvent): boolean => {
    try {
      if (matchesTree(webhook.filter.tree, event)) return true
    } catch (err) {
      unreadable(webhook.id, (err as Error).message)
      return false
    }
    if (webhook.filter.problem) unreadable(webhook.id, webhook.filter.problem)
    return false
  }
  return {
    name: 'dispatcher',
    permanent: deliveryErrorReason,
    async handle(batch: RequestEvent[]) {
      if (batch.length === 0) return
      const started = Date.now()
      const deleted = await deletions.among(batch.map((e) => e.organization_id))
      const events = deleted.size === 0 ? batch : batch.filter((e) => !deleted.has(e.organization_id))
      const webhooks = await directory.forOrganizations([...new Set(events.map((e) => e.organization_id))])
      const deliveries: NewDelivery[] = []
      const room = worker.room()
      for (const event of events) {
        const bodies = new Map<boolean, Buffer>()
        for (const webhook of webhooks.get(event.organization_id) ?? []) {
          if (!webhook.active) continue
          if (!isSampled(webhook.id, event.request_id, webhook.sampleRate)) continue
          if (!decide(webhook, event)) continue
          let body = bodies.get(webhook.includeData)
          if (!body) {
            body = buildPayload(event, webhook.includeData, 'request.completed')
            bodies.set(webhook.includeData, body)
          }
          // Claimed (sent from memory) while this process has room for it, else left due for any.
          const claimed = room.count > 0 && room.bytes >= body.length
          if (claimed) {
            room.count--
            room.bytes -= body.length
          }
          deliveries.push({
            webhookId: webhook.id,
            requestId: event.request_id,
            event: 'request.completed',
            body,
            claimed,
          })
        }
      }
      if (deliveries.length === 0) return
      const { ids: inserted, claimToken } = await repo.insert(deliveries, leaseMs)
      recorded.inc(inserted.size)
      const mine = []
      for (const d of deliveries) {
        const id = d.claimed ? inserted.get(`${d.webhookId}:${d.requestId}`) : undefined
        if (id)
          mine.push({
            id,
            webhookId: d.webhookId,
            requestId: d.requestId,
            body: d.body,
            roundAttempts: 0,
            claimToken,
          })
      }
      worker.enqueue(mine, true)
      log.debug(
        { events: events.length, deliveries: inserted.size, ms: Date.now() - started },
        'webhook_deliveries_recorded',
      )
    },
  }
}

/**
 * Why recording deliveries can never succeed for the events at hand: Postgres refused their
 * values (SQLSTATE class 22, data exception) or a size (class 54, program limit exceeded), or
 * their bodies did not fit in a string (V8's RangeError). Anything else (a connection refused or
 * dropped, a timeout) may pass later and is retried.
 */
function deliveryErrorReason(err: unknown): string | undefined {
  if (err instanceof RangeError) return `cannot be held in memory: ${err.message}`
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string' && /^(22|54)[0-9A-Z]{3}$/.test(code))
    return `postgres ${code}: ${((err as Error).message ?? '').split('\n')[0]?.slice(0, 300)}`
  return undefined
}
