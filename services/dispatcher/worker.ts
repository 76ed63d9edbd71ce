import { Counter, Histogram } from 'prom-client'
import type { Logger } from '../shared/logger.ts'
import { attemptDelivery } from '../shared/webhooks/attempt.ts'
import type { ClaimedDelivery, Completion, DeliveryRepo } from '../shared/webhooks/deliveries.ts'
import { activeKeys, type WebhookDirectory } from '../shared/webhooks/directory.ts'
import { finalOutcome, nextAfter } from '../shared/webhooks/retry-policy.ts'
import type { Sender, SendResult } from '../shared/webhooks/sender.ts'
import { createLeases } from './leases.ts'

const attempts = new Counter({
  name: 'tally_webhook_attempts_total',
  help: 'Delivery attempts by what followed: delivered, retry (scheduled again) or failed (for good)',
  labelNames: ['outcome'] as const,
})
const attemptSeconds = new Histogram({
  name: 'tally_webhook_attempt_duration_seconds',
  help: 'Duration of one delivery attempt, failed ones included',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
})

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
  pollMs?: number
  /** How long stop() keeps trying to write outcomes while Postgres fails. */
  stopBudgetMs?: number
}

interface Job {
  delivery: ClaimedDelivery
  fresh: boolean
}

interface Written {
  completion: Completion
  fresh: boolean
  /** Called once this outcome is written (or given up at stop). */
  onWritten?: () => void
}

interface Lane {
  fresh: Job[]
  retry: Job[]
  active: number
  waiting: boolean
}

/**
 * Sends deliveries. Fresh ones are handed over by the event handler that recorded them (already
 * claimed); due ones are claimed from Postgres with FOR UPDATE SKIP LOCKED by a poll loop, so any
 * number of dispatcher processes share the work and a crashed one's claims come due again when
 * their lease ends. Attempts run in per-destination lanes, round robin, fresh before retries, with
 * a cap per lane so one slow receiver cannot take every slot. Outcomes are written in batches.
 *
 * Every claim carries a token, and an outcome is written only under the claim it was made under.
 * The leases of everything this process holds (queued, in flight, outcome not yet written) are
 * renewed every third of a lease, and the poller never claims an id this process holds, so a
 * live process's deliveries are never claimed and sent again by another.
 */
export function createDeliveryWorker(options: WorkerOptions) {
  const { repo, directory, sender, log, schedule, leaseMs } = options
  const maxInFlight = options.maxInFlight ?? 256
  const perDestination = options.perDestination ?? 32
  const maxHeld = options.maxHeld ?? maxInFlight * 4
  const pollMs = options.pollMs ?? 200
  const stopBudgetMs = options.stopBudgetMs ?? 10_000
  const leases = createLeases({ repo, leaseMs, log })
  const forget = leases.forget
  let stopDeadline = Number.POSITIVE_INFINITY
  const lanes = new Map<string, Lane>()
  const waiting: string[] = []
  const held = { fresh: 0, retry: 0 }
  let active = 0
  let running = true
  const completions: Written[] = []
  let writer: Promise<void> | undefined
  let wake: (() => void) | undefined
  let pollerFull = false
  const idle = new Set<() => void>()
  /** Webhooks being disabled after a 410: stop() waits for them. */
  const disables = new Set<Promise<void>>()

  function enqueue(deliveries: ClaimedDelivery[], fresh: boolean): void {
    if (deliveries.length === 0) return
    held[fresh ? 'fresh' : 'retry'] += deliveries.length
    leases.hold(deliveries)
    void place(deliveries, fresh)
  }

  async function place(deliveries: ClaimedDelivery[], fresh: boolean): Promise<void> {
    let targets: Awaited<ReturnType<WebhookDirectory['byIds']>>
    try {
      targets = await directory.byIds(deliveries.map((d) => d.webhookId))
    } catch (err) {
      // Their lease runs out and they come due again.
      log.error({ err, count: deliveries.length }, 'webhook_lookup_failed')
      for (const delivery of deliveries) forget(delivery)
      release(deliveries.length, fresh)
      return
    }
    if (!running) {
      for (const delivery of deliveries) forget(delivery)
      release(deliveries.length, fresh)
      await repo.release(deliveries).catch(() => {})
      return
    }
    for (const delivery of deliveries) {
      const target = targets.get(delivery.webhookId)
      if (!target) {
        forget(delivery)
        release(1, fresh) // the webhook was deleted, and its deliveries with it
        continue
      }
      const key = originOf(target.destination)
      let lane = lanes.get(key)
      if (!lane) {
        lane = { fresh: [], retry: [], active: 0, waiting: false }
        lanes.set(key, lane)
      }
      lane[fresh ? 'fresh' : 'retry'].push({ delivery, fresh })
      if (!lane.waiting) {
        lane.waiting = true
        waiting.push(key)
      }
    }
    pump()
  }

  function release(count: number, fresh: boolean) {
    held[fresh ? 'fresh' : 'retry'] -= count
    if (held.fresh + held.retry === 0) for (const resolve of idle) resolve()
    // A poller asleep because this process was full wakes once there is room for a good batch.
    if (pollerFull && claimRoom() >= Math.min(100, maxHeld / 4)) wake?.()
  }

  /** How many due deliveries the poller may claim now. */
  function claimRoom(): number {
    return Math.min(500, Math.floor(maxHeld / 2) - held.retry, maxHeld - held.fresh - held.retry)
  }

  function pump(): void {
    while (running && active < maxInFlight && waiting.length > 0) {
      const key = waiting.shift() as string
      const lane = lanes.get(key)
      if (!lane) continue
      lane.waiting = false
      if (lane.active >= perDestination) continue // re-queued when one of its attempts ends
      const job = lane.fresh.shift() ?? lane.retry.shift()
      if (!job) continue
      lane.active++
      active++
      if (lane.active < perDestination && lane.fresh.length + lane.retry.length > 0) {
        lane.waiting = true
        waiting.push(key)
      }
      void attempt(job).then((queued) => {
        lane.active--
        active--
        if (!queued) release(1, job.fresh) // else once its outcome is written
        if (lane.fresh.length + lane.retry.length > 0) {
          if (!lane.waiting) {
            lane.waiting = true
            waiting.push(key)
          }
        } else if (lane.active === 0) lanes.delete(key)
        pump()
      })
    }
  }

  /** Whether an outcome was queued for writing. */
  async function attempt({ delivery, fresh }: Job): Promise<boolean> {
    let completed = false
    try {
      if (leases.isLost(delivery)) return false // no longer ours: whoever holds it sends it
      const target = (await directory.byIds([delivery.webhookId])).get(delivery.webhookId)
      if (!target) return false // deleted: deliveries stop at once
      if (!target.active) {
        const result = DISABLED
        complete({ delivery, attemptedAt: new Date(), result, next: finalOutcome(result) }, fresh)
        completed = true
        return true
      }
      const { attemptedAt, result } = await attemptDelivery(
        sender,
        { destination: target.destination, keys: activeKeys(target) },
        delivery,
      )
      const next = nextAfter(result, delivery.roundAttempts, schedule)
      const gone = next.status === 'failed' && next.disable
      let written: Promise<void> | undefined
      if (gone)
        written = new Promise((resolve) => complete({ delivery, attemptedAt, result, next }, fresh, resolve))
      else complete({ delivery, attemptedAt, result, next }, fresh)
      completed = true
      attempts.inc({ outcome: next.status === 'pending' ? 'retry' : next.status })
      attemptSeconds.observe(result.durationMs / 1000)
      if (gone) {
        // This attempt first, then the rest of the webhook's pending deliveries. Tracked, so that
        // stop() waits for it: the attempt's slot is freed once its outcome is written, before.
        const disabling = (async () => {
          await written
          await repo.disable(target.id, `receiver answered 410 Gone at ${attemptedAt.toISOString()}`)
        })()
        disables.add(disabling)
        try {
          await disabling
        } finally {
          disables.delete(disabling)
        }
      }
      if (!result.ok)
        log.debug(
          { delivery: delivery.id, status: result.status, error: result.error },
          'webhook_attempt_failed',
        )
    } catch (err) {
      log.error({ err, delivery: delivery.id }, 'webhook_attempt_crashed')
    } finally {
      if (!completed) forget(delivery) // its lease runs out, if it is still pending
    }
    return completed
  }

  /**
   * Outcomes are written by one writer at a time, each write taking all that ended meanwhile: a
   * quiet process writes each at once, a busy one in batches as large as the writes are slow.
   */
  function complete(completion: Completion, fresh: boolean, onWritten?: () => void): void {
    completions.push(onWritten ? { completion, fresh, onWritten } : { completion, fresh })
    writer ??= writeAll()
  }

  async function writeAll(): Promise<void> {
    try {
      while (completions.length > 0) await writeWithRetry(completions.splice(0, 1_000))
    } finally {
      writer = undefined
    }
  }

  /** Resolves once the writer is idle: every outcome written (or given up at stop). */
  function drained(): Promise<void> {
    return writer ?? Promise.resolve()
  }

  /** Retries for as long as the process runs, and once stopping, until the stop budget is spent. */
  async function writeWithRetry(batch: Written[]): Promise<void> {
    const done = () => {
      for (const { completion, fresh, onWritten } of batch) {
        forget(completion.delivery)
        release(1, fresh)
        onWritten?.()
      }
    }
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, 5_000)) {
      try {
        await repo.complete(batch.map((w) => w.completion))
        done()
        return
      } catch (err) {
        // Unrecorded attempts are sent again when their lease ends: at least once, never lost.
        log.error({ err, count: batch.length }, 'webhook_outcomes_write_failed')
        const left = running ? backoff : Math.min(backoff, stopDeadline - Date.now())
        if (left <= 0) {
          done()
          return
        }
        await new Promise((r) => setTimeout(r, left))
      }
    }
  }

  const poller = (async () => {
    while (running) {
      const room = claimRoom()
      let claimed = 0
      if (room > 0) {
        try {
          const due = await repo.claimDue(room, leaseMs, leases.ids())
          claimed = due.length
          enqueue(due, false)
        } catch (err) {
          log.error({ err }, 'webhook_claim_failed')
        }
      }
      if (running && (room <= 0 || claimed < room)) {
        pollerFull = room <= 0
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => wake?.(), pollMs)
          wake = () => {
            wake = undefined
            clearTimeout(timer)
            resolve()
          }
        })
      }
    }
  })()

  return {
    /** How many fresh deliveries this process can take now; the rest are left due for any. */
    room(): number {
      return running ? Math.max(0, maxHeld - held.fresh - held.retry) : 0
    },
    enqueue,

    /** Stops claiming, hands back what was not started, lets attempts in flight end, writes outcomes. */
    async stop(): Promise<void> {
      running = false
      stopDeadline = Date.now() + stopBudgetMs
      wake?.()
      await poller
      const unstarted: ClaimedDelivery[] = []
      for (const lane of lanes.values()) {
        for (const job of [...lane.fresh, ...lane.retry]) {
          unstarted.push(job.delivery)
          release(1, job.fresh)
        }
        lane.fresh = []
        lane.retry = []
      }
      if (held.fresh + held.retry > 0) await new Promise<void>((resolve) => idle.add(resolve))
      await drained()
      await Promise.allSettled([...disables])
      leases.stop()
      await repo.release(unstarted).catch((err: unknown) => log.warn({ err }, 'webhook_release_failed'))
      for (const delivery of unstarted) forget(delivery)
    },
  }
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>

function originOf(destination: string): string {
  try {
    return new URL(destination).origin
  } catch {
    return destination
  }
}
