import type { Logger } from '../shared/logger.ts'
import { counter, histogram } from '../shared/metrics.ts'
import { attemptDelivery } from '../shared/webhooks/attempt.ts'
import type { ClaimedDelivery, Completion, DeliveryRepo } from '../shared/webhooks/deliveries.ts'
import { activeKeys, type WebhookDirectory } from '../shared/webhooks/directory.ts'
import { finalOutcome, nextAfter } from '../shared/webhooks/retry-policy.ts'
import type { Sender, SendResult } from '../shared/webhooks/sender.ts'
import { createHeld } from './held.ts'
import { createLanes } from './lanes.ts'
import { createLeases } from './leases.ts'
import { createOutcomeWriter } from './outcomes.ts'
import { startPoller } from './poller.ts'

const attempts = counter(
  'tally_webhook_attempts_total',
  'Delivery attempts by what followed: delivered, retry (scheduled again) or failed (for good)',
  {
    labelNames: ['outcome'],
  },
)
const attemptSeconds = histogram(
  'tally_webhook_attempt_duration_seconds',
  'Duration of one delivery attempt, failed ones included',
  {
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  },
)

/** The outcome recorded for a delivery whose webhook was disabled after it was recorded: not sent. */
const DISABLED: SendResult = {
  ok: false,
  status: null,
  durationMs: 0,
  responseBody: null,
  error: 'webhook disabled',
  retryAfterMs: null,
}

export interface WorkerOptions {
  repo: DeliveryRepo
  directory: WebhookDirectory
  sender: Sender
  log: Logger
  schedule: readonly number[]
  leaseMs: number
  /** Attempts in flight at once, over all destinations. */
  maxInFlight?: number
  /** Attempts in flight at once to one destination origin. */
  perDestination?: number
  /**
   * Deliveries held by this process (queued, in flight, or with their outcome not yet written),
   * half of it at most for due retries: only what can start soon is claimed (4 × maxInFlight by
   * default), and when outcomes are written slower than attempts end, claiming waits for them.
   */
  maxHeld?: number
  /** Bytes of delivery bodies held at most (one larger body is still taken when nothing else is). */
  maxHeldBytes?: number
  pollMs?: number
  /** How long stop() keeps trying to write outcomes while Postgres fails. */
  stopBudgetMs?: number
}

interface Job {
  delivery: ClaimedDelivery
  fresh: boolean
}

/**
 * Sends deliveries. Fresh ones are handed over by the event handler that recorded them (already
 * claimed); due ones are claimed from Postgres with FOR UPDATE SKIP LOCKED by the poller, so any
 * number of dispatcher processes share the work and a crashed one's claims come due again when
 * their lease ends. Attempts run in per-destination lanes (lanes.ts); outcomes are written in
 * batches (outcomes.ts), and a delivery counts as held until its outcome is written (held.ts).
 *
 * Every claim carries a token, and an outcome is written only under the claim it was made under.
 * The leases of everything this process holds (queued, in flight, outcome not yet written) are
 * renewed every third of a lease, and the poller never claims an id this process holds, so a
 * live process's deliveries are never claimed and sent again by another.
 */
export function createDeliveryWorker(options: WorkerOptions) {
  const { repo, directory, sender, log, schedule, leaseMs } = options
  const maxInFlight = options.maxInFlight ?? 256
  const maxHeld = options.maxHeld ?? maxInFlight * 4
  const leases = createLeases({ repo, leaseMs, log })
  const held = createHeld(maxHeld, options.maxHeldBytes ?? 64 * 1024 * 1024)
  const outcomes = createOutcomeWriter({ repo, log, stopBudgetMs: options.stopBudgetMs ?? 10_000 })
  const lanes = createLanes<Job>({
    maxInFlight,
    perDestination: options.perDestination ?? 32,
    run: async (job) => {
      if (!(await attempt(job))) release([job.delivery], job.fresh) // else once its outcome is written
    },
  })
  /** Webhooks being disabled after a 410: stop() waits for them. */
  const disables = new Set<Promise<void>>()
  let running = true
  const poller = startPoller({
    // A claim needs room for at least one body; its size is only known once claimed.
    claimRoom: () => {
      const room = held.claimRoom()
      return room.bytes > 0 ? room.count : 0
    },
    async claim(limit) {
      const { claimed, more } = await repo.claimDue(limit, leaseMs, leases.ids(), held.claimRoom().bytes)
      enqueue(claimed, false)
      // Cut short by bytes: as if the room was filled, so the poller waits for room, not a tick.
      return more ? limit : claimed.length
    },
    pollMs: options.pollMs ?? 200,
    wakeAt: Math.min(100, maxHeld / 4),
    log,
  })

  function enqueue(deliveries: ClaimedDelivery[], fresh: boolean): void {
    if (deliveries.length === 0) return
    held.add(deliveries, fresh)
    leases.hold(deliveries)
    void place(deliveries, fresh)
  }

  function release(deliveries: readonly ClaimedDelivery[], fresh: boolean): void {
    held.release(deliveries, fresh)
    poller.roomFreed()
  }

  /** Lets go of deliveries that will not be attempted here: their lease runs out, if still pending. */
  function drop(deliveries: ClaimedDelivery[], fresh: boolean): void {
    for (const delivery of deliveries) leases.forget(delivery)
    release(deliveries, fresh)
  }

  /** Into the lane of each delivery's destination. */
  async function place(deliveries: ClaimedDelivery[], fresh: boolean): Promise<void> {
    let targets: Awaited<ReturnType<WebhookDirectory['byIds']>>
    try {
      targets = await directory.byIds(deliveries.map((d) => d.webhookId))
    } catch (err) {
      log.error({ err, count: deliveries.length }, 'webhook_lookup_failed')
      return drop(deliveries, fresh)
    }
    if (!running) {
      drop(deliveries, fresh)
      await repo.release(deliveries).catch(() => {})
      return
    }
    const jobs: { destination: string; job: Job }[] = []
    for (const delivery of deliveries) {
      const target = targets.get(delivery.webhookId)
      // The webhook was deleted, and its deliveries with it.
      if (target) jobs.push({ destination: target.destination, job: { delivery, fresh } })
      else drop([delivery], fresh)
    }
    lanes.add(jobs, fresh)
  }

  /** Queues an outcome for writing; the delivery is held until then. Resolves once written. */
  function record(completion: Completion, fresh: boolean): Promise<void> {
    return new Promise((resolve) =>
      outcomes.write(completion, () => {
        leases.forget(completion.delivery)
        release([completion.delivery], fresh)
        resolve()
      }),
    )
  }

  /** One attempt; whether its outcome was queued for writing. */
  async function attempt({ delivery, fresh }: Job): Promise<boolean> {
    let recorded = false
    try {
      if (leases.isLost(delivery)) return false // no longer ours: whoever holds it sends it
      const target = (await directory.byIds([delivery.webhookId])).get(delivery.webhookId)
      if (!target) return false // deleted: deliveries stop at once
      if (!target.active) {
        void record(
          { delivery, attemptedAt: new Date(), result: DISABLED, next: finalOutcome(DISABLED) },
          fresh,
        )
        recorded = true
        return true
      }
      const { attemptedAt, result } = await attemptDelivery(
        sender,
        { destination: target.destination, keys: activeKeys(target) },
        delivery,
      )
      const next = nextAfter(result, delivery.roundAttempts, schedule)
      const written = record({ delivery, attemptedAt, result, next }, fresh)
      recorded = true
      attempts.inc({ outcome: next.status === 'pending' ? 'retry' : next.status })
      attemptSeconds.observe(result.durationMs / 1000)
      if (next.status === 'failed' && next.disable)
        await disableAfter(written, target.id, `receiver answered 410 Gone at ${attemptedAt.toISOString()}`)
      if (!result.ok)
        log.debug(
          { delivery: delivery.id, status: result.status, error: result.error },
          'webhook_attempt_failed',
        )
    } catch (err) {
      log.error({ err, delivery: delivery.id }, 'webhook_attempt_crashed')
    } finally {
      if (!recorded) leases.forget(delivery) // its lease runs out, if it is still pending
    }
    return recorded
  }

  /**
   * After a 410: this attempt's outcome first, then the rest of the webhook's pending deliveries.
   * Tracked, so that stop() waits for it; the attempt stops counting as held once its outcome is
   * written, before.
   */
  async function disableAfter(written: Promise<void>, webhookId: string, reason: string): Promise<void> {
    const disabling = written.then(() => repo.disable(webhookId, reason))
    disables.add(disabling)
    try {
      await disabling
    } finally {
      disables.delete(disabling)
    }
  }

  return {
    /**
     * How many fresh deliveries, and bytes of their bodies, this process can take now; the rest
     * are left due for any.
     */
    room(): { count: number; bytes: number } {
      return running ? held.room() : { count: 0, bytes: 0 }
    },
    enqueue,

    /** Stops claiming, hands back what was not started, lets attempts in flight end, writes outcomes. */
    async stop(): Promise<void> {
      running = false
      outcomes.stopping()
      const unstarted = lanes.close()
      await poller.stop()
      for (const job of unstarted) release([job.delivery], job.fresh)
      await held.idle()
      await outcomes.drained()
      await Promise.allSettled([...disables])
      leases.stop()
      const deliveries = unstarted.map((job) => job.delivery)
      await repo.release(deliveries).catch((err: unknown) => log.warn({ err }, 'webhook_release_failed'))
      for (const delivery of deliveries) leases.forget(delivery)
    },
  }
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>
