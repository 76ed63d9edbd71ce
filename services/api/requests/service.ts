import { AppError, badRequest } from '../../shared/errors.ts'
import { EncodeError } from '../../shared/events/codec.ts'
import { PublishQueueFullError } from '../../shared/events/publish-queue.ts'
import type { RequestEvent } from '../../shared/events/request-event.ts'
import { type EventPublisher, UnrecordableEventsError } from '../../shared/events/transport.ts'
import type { Logger } from '../../shared/logger.ts'
import { counter } from '../../shared/metrics.ts'
import { type IntakeEvent, toRequestEvent } from './intake.ts'
import type { PriceTable } from './prices.ts'
import { createRecentIds } from './recent-ids.ts'
import type { RequestRepo } from './repo.ts'

const accepted = counter(
  'tally_events_accepted_total',
  'Request events the API acknowledged as durable (201)',
)
const refused = counter(
  'tally_events_publish_failed_total',
  'Request events the API could not make durable (answered 503; the caller retries)',
)

const rejected = counter(
  'tally_events_rejected_total',
  'Events answered 400 after validation: the event codec could not carry them, or (embedded mode) ClickHouse refused them',
  {
    labelNames: ['stage'],
  },
)

const lookupFailures = counter(
  'tally_intake_lookup_failures_total',
  'Intakes accepted without checking caller-supplied ids against stored rows: failed (ClickHouse unreachable, too slow, or over a query limit) or skipped (soon after a failure)',
  {
    labelNames: ['outcome'],
  },
)

const unavailable = () =>
  new AppError(503, 'unavailable', 'The events could not be recorded; retry with the same request ids', {
    retryAfterSeconds: 1,
  })

/** After a look-up failed, the next ones are skipped for this long: a stalled ClickHouse costs one wait. */
const LOOKUP_PAUSE_MS = 5_000

/** Caller-supplied ids whose created_at each API process remembers (about 8 MB). */
const RECENT_IDS = 50_000

/**
 * Turns logged requests into events and publishes them; resolves once they are durable (Kafka
 * acks=all, or written by the in-process handlers). Returns the request ids in input order.
 * An event that can never be recorded is a 400 naming it (`at(index)`), not a 503: retrying it
 * could never succeed.
 */
export function createIntake(deps: {
  repo: RequestRepo
  publisher: EventPublisher
  prices: PriceTable
  log: Logger
  /** How long the look-up of re-sent ids may take before the intake goes on without it. */
  lookupTimeoutMs: number
  /** Counts the events against the organization's limit; throws the 429 past it. */
  countEvents(organizationId: string, events: number): Promise<void>
}) {
  let lookupsPausedUntil = 0
  const recent = createRecentIds(RECENT_IDS)
  return async function record(
    organizationId: string,
    inputs: IntakeEvent[],
    at: (index: number) => string = (i) => `body.events.${i}`,
  ): Promise<string[]> {
    await deps.countEvents(organizationId, inputs.length)
    const now = new Date()
    const events = inputs.map((input) => toRequestEvent(input, organizationId, deps.prices, now))
    const supplied = events.filter((_, i) => inputs[i]?.request_id !== undefined)
    await keepFirstCreatedAt(organizationId, supplied)
    // The same id twice in one batch: the last one replaces the earlier ones, as a re-send would.
    const latest = new Map<string, RequestEvent>()
    for (const e of events) latest.set(e.request_id, e)
    const published = [...latest.values()]
    const inputIndex = (i: number) => events.lastIndexOf(published[i] as RequestEvent)
    try {
      await deps.publisher.publish(published)
    } catch (err) {
      if (err instanceof EncodeError) {
        rejected.inc({ stage: 'encode' }, 1)
        throw badRequest(`${at(inputIndex(err.index))}: cannot be encoded (${err.message})`)
      }
      if (err instanceof UnrecordableEventsError) {
        rejected.inc({ stage: 'store' }, err.events.length)
        deps.log.error({ failed: err.events.slice(0, 5) }, 'intake_events_unrecordable')
        const first = err.events[0] as { index: number; reason: string }
        const others = published.length - err.events.length
        throw badRequest(
          `${at(inputIndex(first.index))}: cannot be stored (${first.reason})` +
            (others > 0 ? `; the batch's other ${others} event(s) were stored` : ''),
        )
      }
      refused.inc(latest.size)
      if (err instanceof PublishQueueFullError) {
        deps.log.warn({ err: err.message, events: latest.size }, 'intake_publish_queue_full')
        throw new AppError(
          503,
          'busy',
          `Tally is busy: too many events wait to be stored (${err.message}); retry in ${err.retryAfterSeconds} s with the same request ids`,
          { retryAfterSeconds: err.retryAfterSeconds },
        )
      }
      deps.log.error({ err, events: latest.size }, 'intake_publish_failed')
      throw unavailable()
    }
    accepted.inc(latest.size)
    recent.remember(organizationId, supplied)
    return events.map((e) => e.request_id)
  }

  /**
   * A re-sent id must land on the row it replaces, and the table's sorting key holds
   * created_at: so a caller-supplied id already stored keeps its stored created_at (the first
   * one wins; latency and everything else come from the re-send).
   */
  async function keepFirstCreatedAt(organizationId: string, supplied: RequestEvent[]): Promise<void> {
    if (supplied.length === 0) return
    // What this process published lately first; ClickHouse for the others.
    const stored = new Map<string, Date>()
    for (const e of supplied) {
      const first = recent.get(organizationId, e.request_id)
      if (first) stored.set(e.request_id, first)
    }
    const unknown = [...new Set(supplied.map((e) => e.request_id).filter((id) => !stored.has(id)))]
    if (unknown.length > 0 && Date.now() < lookupsPausedUntil) {
      lookupFailures.inc({ outcome: 'skipped' })
    } else if (unknown.length > 0) {
      try {
        const found = await deps.repo.createdAtOf(organizationId, unknown, deps.lookupTimeoutMs)
        for (const [id, first] of found) stored.set(id, first)
      } catch (err) {
        // ClickHouse unreachable, too slow, or the look-up exceeded a query limit: accepting
        // matters more (callers like Helicone's logger never retry), and the next intakes do
        // not wait for it either for a while. The cost is a possible second row, only for a
        // re-send with a new created_at that another process (or this one, long ago) published.
        lookupsPausedUntil = Date.now() + LOOKUP_PAUSE_MS
        lookupFailures.inc({ outcome: 'failed' })
        deps.log.warn({ err, events: supplied.length }, 'intake_created_at_lookup_failed')
      }
    }
    const firstInBatch = new Map<string, Date>()
    for (const e of supplied) {
      const first = stored.get(e.request_id) ?? firstInBatch.get(e.request_id)
      if (!first) {
        firstInBatch.set(e.request_id, e.created_at)
        continue
      }
      if (first.getTime() === e.created_at.getTime()) continue
      e.created_at = first
      e.completed_at = new Date(first.getTime() + e.latency_ms)
    }
  }
}

export type Intake = ReturnType<typeof createIntake>
