import type { DeletedOrganizations } from '../shared/deleted-organizations.ts'
import type { AnnotationEvent } from '../shared/events/annotation-event.ts'
import { annotationEvents, requestEvents, type TallyEvent } from '../shared/events/event.ts'
import type { EventHandler } from '../shared/events/handler.ts'
import type { RequestEvent } from '../shared/events/request-event.ts'
import type { Logger } from '../shared/logger.ts'
import { counter } from '../shared/metrics.ts'
import { type DeliveryRepo, deliveryKey, type NewDelivery } from '../shared/webhooks/deliveries.ts'
import type { WebhookDirectory, WebhookTarget } from '../shared/webhooks/directory.ts'
import {
  buildPayload,
  buildScorePayload,
  isSampled,
  type ScoreEventKind,
  scoreEventKindOf,
} from '../shared/webhooks/payload.ts'
import { matchesTree } from './evaluate-filter.ts'
import { type ScoredRequests, scoredKey } from './scored-requests.ts'
import type { DeliveryWorker } from './worker.ts'

const recorded = counter(
  'tally_webhook_deliveries_recorded_total',
  'Deliveries written for request and score events (a redelivered event writes none)',
)

/** A live score event and the webhook event it is. */
interface ScoreEvent {
  event: AnnotationEvent
  kind: ScoreEventKind
}

/**
 * The dispatcher's side of the event stream: for every event and every active webhook of its
 * organization that subscribes to its kind and samples and filters it in, one delivery row with
 * the exact body bytes. The batch resolves only once the rows are written, so Kafka commits (or
 * the intake acknowledges) only what is durable; a redelivered event conflicts with its rows and
 * is not sent again. Rows this process has room for are claimed as they are written and sent at
 * once.
 *
 * A request event is `request.completed`; a live score `score.created` or `feedback.created`
 * (payload.ts), decided on the scored request as stored: the requests of a batch's scores are
 * read in one query, and only for organizations with a webhook that takes score events.
 */
export function createDispatchHandler(deps: {
  directory: WebhookDirectory
  /** Events of a deleted organization get no delivery. */
  deletions: Pick<DeletedOrganizations, 'among'>
  repo: DeliveryRepo
  worker: DeliveryWorker
  leaseMs: number
  log: Logger
  /**
   * The stored requests scores are about; absent in a process without ClickHouse, where every
   * scored request reads as not stored.
   */
  scoredRequests?: ScoredRequests
}): EventHandler {
  const { directory, deletions, repo, worker, leaseMs, log, scoredRequests } = deps
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
  /** Whether the webhook takes the event: active, subscribed to its kind. */
  const subscribed = (webhook: WebhookTarget, kind: string) => webhook.active && webhook.events.has(kind)

  return {
    name: 'dispatcher',
    permanent: deliveryErrorReason,
    async handle(all: TallyEvent[]) {
      const scores: ScoreEvent[] = []
      for (const event of annotationEvents(all)) {
        const kind = scoreEventKindOf(event)
        if (kind) scores.push({ event, kind })
      }
      const requests = requestEvents(all)
      if (requests.length === 0 && scores.length === 0) return
      const started = Date.now()
      const organizations = [
        ...new Set([...requests, ...scores.map((s) => s.event)].map((e) => e.organization_id)),
      ]
      const deleted = await deletions.among(organizations)
      const live = (organizationId: string) => !deleted.has(organizationId)
      const webhooks = await directory.forOrganizations(organizations.filter(live))
      const deliveries: NewDelivery[] = []
      const room = worker.room()
      /** Claimed (sent from memory) while this process has room for it, else left due for any. */
      const claim = (body: Buffer) => {
        const claimed = room.count > 0 && room.bytes >= body.length
        if (claimed) {
          room.count--
          room.bytes -= body.length
        }
        return claimed
      }
      // An event twice in one batch (a producer's retry, a score sent twice) is one delivery:
      // both would otherwise be claimed under the one row insert() returns for them.
      const keys = new Set<string>()
      const add = (delivery: Omit<NewDelivery, 'claimed'>) => {
        const key = deliveryKey(delivery)
        if (keys.has(key)) return
        keys.add(key)
        deliveries.push({ ...delivery, claimed: claim(delivery.body) })
      }
      let events = 0
      for (const event of requests) {
        if (!live(event.organization_id)) continue
        events++
        const bodies = new Map<boolean, Buffer>()
        for (const webhook of webhooks.get(event.organization_id) ?? []) {
          if (!subscribed(webhook, 'request.completed')) continue
          if (!isSampled(webhook.id, event.request_id, webhook.sampleRate)) continue
          if (!decide(webhook, event)) continue
          let body = bodies.get(webhook.includeData)
          if (!body) {
            body = buildPayload(event, webhook.includeData, 'request.completed')
            bodies.set(webhook.includeData, body)
          }
          add({ webhookId: webhook.id, requestId: event.request_id, event: 'request.completed', body })
        }
      }
      // Only scores some webhook subscribes to; their requests read in one query.
      const wanted = scores.filter(
        ({ event, kind }) =>
          live(event.organization_id) &&
          (webhooks.get(event.organization_id) ?? []).some((w) => subscribed(w, kind)),
      )
      const stored =
        wanted.length > 0 && scoredRequests
          ? await scoredRequests.find(
              wanted
                .filter(({ event }) => event.target_kind === 'request')
                .map(({ event }) => ({ organizationId: event.organization_id, requestId: event.request_id })),
            )
          : new Map<string, RequestEvent>()
      for (const { event, kind } of wanted) {
        events++
        const request =
          event.target_kind === 'request'
            ? stored.get(scoredKey(event.organization_id, event.request_id))
            : undefined
        let body: Buffer | undefined
        for (const webhook of webhooks.get(event.organization_id) ?? []) {
          if (!subscribed(webhook, kind)) continue
          if (!isSampled(webhook.id, event.score_id, webhook.sampleRate)) continue
          // A filter decides on the scored request: a session's score, or a request not stored
          // (yet), matches only a webhook without one.
          if (webhook.filter.tree.kind !== 'all' && !(request && decide(webhook, request))) continue
          body ??= buildScorePayload(event, kind, request && { sessionId: request.session_id })
          add({
            webhookId: webhook.id,
            requestId: null,
            eventKey: `score:${event.score_id}:${event.version}`,
            event: kind,
            body,
          })
        }
      }
      if (deliveries.length === 0) return
      const { ids: inserted, claimToken } = await repo.insert(deliveries, leaseMs)
      recorded.inc(inserted.size)
      const mine = []
      for (const d of deliveries) {
        const id = d.claimed ? inserted.get(deliveryKey(d)) : undefined
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
        { events, deliveries: inserted.size, ms: Date.now() - started },
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
