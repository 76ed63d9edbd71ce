import type { Logger } from '../shared/logger.ts'
import type { Completion, DeliveryRepo } from '../shared/webhooks/deliveries.ts'

interface Queued {
  completion: Completion
  /** Called once the outcome is written, or given up at stop. */
  written: () => void
}

/**
 * Writes attempts' outcomes one write at a time, each taking all that ended meanwhile: a quiet
 * process writes each at once, a busy one in batches as large as the writes are slow. A failed
 * write is retried with backoff for as long as the process runs, and once stopping until the stop
 * budget is spent: an attempt left unrecorded is sent again when its lease ends, at least once,
 * never lost.
 */
export function createOutcomeWriter(deps: { repo: DeliveryRepo; log: Logger; stopBudgetMs: number }) {
  const { repo, log, stopBudgetMs } = deps
  const queue: Queued[] = []
  let writer: Promise<void> | undefined
  let deadline = Number.POSITIVE_INFINITY

  async function writeAll(): Promise<void> {
    try {
      while (queue.length > 0) await writeWithRetry(queue.splice(0, 1_000))
    } finally {
      writer = undefined
    }
  }

  async function writeWithRetry(batch: Queued[]): Promise<void> {
    for (let backoff = 100; ; backoff = Math.min(backoff * 2, 5_000)) {
      try {
        await repo.complete(batch.map((q) => q.completion))
        break
      } catch (err) {
        log.error({ err, count: batch.length }, 'webhook_outcomes_write_failed')
        const wait = Math.min(backoff, deadline - Date.now())
        if (wait <= 0) break
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
    for (const { written } of batch) written()
  }

  return {
    write(completion: Completion, written: () => void): void {
      queue.push({ completion, written })
      writer ??= writeAll()
    },

    /** From now on a failing write is given up once the stop budget is spent. */
    stopping(): void {
      deadline = Date.now() + stopBudgetMs
    },

    /** Resolves once the writer is idle: every outcome written (or given up at stop). */
    drained: (): Promise<void> => writer ?? Promise.resolve(),
  }
}
