import { ClickHouseError } from '@clickhouse/client'
import type { BlobStore } from '../shared/blobs/blob-store.ts'
import { bytesText } from '../shared/clickhouse/query-limits.ts'
import type { DeletedOrganizations } from '../shared/deleted-organizations.ts'
import { AppError } from '../shared/errors.ts'
import { EXPORTS_CHANNEL, exportPrefix } from '../shared/exports/contract.ts'
import type { Logger } from '../shared/logger.ts'
import { counter, gauge } from '../shared/metrics.ts'
import type { Sql } from '../shared/postgres.ts'
import type { ClaimedExport, ExportJobs } from './jobs.ts'
import type { ExportQueries } from './query.ts'
import { CountMismatch, LeaseLost, runExport } from './run-export.ts'

const outcomes = counter(
  'tally_exports_total',
  'Export attempts by what followed: succeeded, retried (due again later) or failed (for good)',
  {
    labelNames: ['outcome'],
  },
)
const rowsExported = counter('tally_export_rows_total', 'Rows written by succeeded exports, by format', {
  labelNames: ['format'],
})
const bytesExported = counter(
  'tally_export_bytes_total',
  'Bytes of the files of succeeded exports, by format',
  {
    labelNames: ['format'],
  },
)

const running = gauge('tally_export_jobs_running', 'Export jobs this process runs now')
const passes = counter(
  'tally_export_passes_total',
  'Passes of the exporter over due work (schedules, byte limits, claims), each after a notification, a finished job or the poll',
)
const heldBack = counter(
  'tally_export_held_back_total',
  "Queued export jobs held back because their organization's files of the last hour reached TALLY_EXPORT_MAX_BYTES_PER_HOUR",
)

export interface ExportWorkerOptions {
  /** Postgres, for the notifications that say a job is due. */
  sql: Sql
  jobs: ExportJobs
  queries: ExportQueries
  blobs: BlobStore
  log: Logger
  /** Jobs this process runs at once. */
  concurrency: number
  partRows: number
  /** How long one step (a ClickHouse query, a file's upload) may take. */
  stepTimeoutMs: number
  leaseMs: number
  /** The longest an idle exporter waits without a notification before it looks again. */
  pollMs: number
  settleMs: number
  /** Exports of one organization queued or running at once; its schedules' later windows wait. */
  maxPending: number
  /** Bytes of files one organization may have stored in the last hour; beyond, its jobs wait. */
  maxBytesPerHour: number
  /** Waits before retries 1, 2, …; attempts beyond its length fail the export. */
  retrySchedule: readonly number[]
  /** This process's scratch folder: parts wait there for their upload. */
  scratchDir: string
  /** A job of an organization whose deletion began stops, and removes what it wrote. */
  deletions: Pick<DeletedOrganizations, 'isDeleted' | 'onDeleted'>
}

/** The reason kept on an export stopped because its organization is being deleted (until its row goes too). */
const ORGANIZATION_DELETED = 'the organization was deleted'

/** Why an attempt failed, as the export's owner reads it (GET /v1/exports/{id}). */
function reasonOf(err: unknown): string {
  if (err instanceof CountMismatch) return err.message
  // The stored filter no longer compiles (a field this version of Tally does not know).
  if (err instanceof AppError) return err.message
  if (err instanceof ClickHouseError) return `ClickHouse error ${err.code}: ${err.message.split('\n')[0]}`
  const name = (err as { name?: unknown })?.name
  if (name === 'AbortError' || name === 'TimeoutError') return 'a step of the export did not finish in time'
  const status = (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode
  if (status !== undefined) return `object store error ${status}: ${String(name)}`
  const code = (err as { code?: unknown })?.code
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `I/O error ${code}`
  return 'internal error (the log has the details under the export id)'
}

/** The shortest wait between two passes that found nothing to run, so a stuck row cannot spin the loop. */
const MIN_WAIT_MS = 100
/** The wait after a pass failed (Postgres unavailable), when the poll is longer. */
const ERROR_WAIT_MS = 5_000
/** Rows of export_bytes older than an hour are deleted at most this often. */
const FORGET_EVERY_MS = 60_000

/**
 * Runs exports and turns schedules into exports. One loop makes passes over due work: queue the
 * ended windows of schedules, hold back organizations past their bytes per hour, then claim jobs
 * (in turns across organizations, jobs.claim) while a slot is free. Between passes it sleeps until
 * a notification (a job was queued or handed back, NOTIFY on EXPORTS_CHANNEL), a job of its own
 * ends, the next queued job comes due, or `pollMs` passes, whichever is first.
 *
 * Jobs are claimed from Postgres under leases, so any number of exporter processes share them and
 * none runs a job another holds; the lease is renewed every third of its length while the job
 * runs, and a job whose process died comes due again when its lease ends. A failed attempt is
 * written back as data (due again after the retry schedule's next wait, with its reason) until
 * the attempts run out; then the export is failed, reason kept.
 */
export async function startExportWorker(options: ExportWorkerOptions) {
  const { jobs, log, leaseMs, pollMs, retrySchedule, concurrency, maxBytesPerHour, deletions } = options
  const maxAttempts = retrySchedule.length + 1
  const stopping = new AbortController()
  const runs = new Set<Promise<void>>()
  // Set by every wake; a pass clears it when it starts, so a wake during a pass is not slept through.
  let woken = false
  let interrupt: (() => void) | undefined
  let forgotAt = 0

  const wake = () => {
    woken = true
    interrupt?.()
  }
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopping.signal.aborted) return resolve()
      const done = () => {
        clearTimeout(timer)
        interrupt = undefined
        resolve()
      }
      // setTimeout takes at most 2^31 - 1 ms.
      const timer = setTimeout(done, Math.min(ms, 2 ** 31 - 1))
      interrupt = done
    })

  // A reconnect may have missed notifications: look again.
  const listener = await options.sql.listen(EXPORTS_CHANNEL, wake, wake)

  /**
   * Keeps the lease while the job runs; aborts the job when the lease is lost, or its
   * organization's deletion begins (announced at once; asked too at each renewal).
   */
  function holdLease(job: ClaimedExport, lost: AbortController, deleted: AbortController) {
    let expiresAt = Date.now() + leaseMs
    const stopWatching = deletions.onDeleted((organizationId) => {
      if (organizationId === job.organizationId) deleted.abort(new Error(ORGANIZATION_DELETED))
    })
    const timer = setInterval(async () => {
      try {
        if (await deletions.isDeleted(job.organizationId)) deleted.abort(new Error(ORGANIZATION_DELETED))
        else if (await jobs.renew(job, leaseMs)) expiresAt = Date.now() + leaseMs
        else lost.abort(new Error('lease lost'))
      } catch (err) {
        log.warn({ err, exportId: job.id }, 'export_lease_renewal_failed')
        if (Date.now() >= expiresAt) lost.abort(new Error('lease expired'))
      }
    }, leaseMs / 3)
    return () => {
      clearInterval(timer)
      stopWatching()
    }
  }

  /**
   * The job's organization is being deleted: removes the files the job wrote, then gives up the
   * lease. The deletion waits for that (no export of the organization running under a lease)
   * before it removes the organization's files itself, so none is written after it.
   */
  async function dropDeleted(job: ClaimedExport): Promise<void> {
    await options.blobs.deletePrefix(`${exportPrefix(job.organizationId, job.id)}/`)
    await jobs.fail(job, ORGANIZATION_DELETED)
    log.info({ exportId: job.id, organizationId: job.organizationId }, 'export_stopped_organization_deleted')
  }

  async function settle(
    job: ClaimedExport,
    err: unknown,
    lost: AbortSignal,
    deleted: AbortSignal,
  ): Promise<void> {
    if (deleted.aborted || (await deletions.isDeleted(job.organizationId))) {
      await dropDeleted(job)
      return
    }
    if (stopping.signal.aborted) {
      await jobs.release(job)
      log.info({ exportId: job.id }, 'export_released_at_shutdown')
      return
    }
    if (lost.aborted || err instanceof LeaseLost) {
      log.warn({ exportId: job.id, reason: String(lost.reason ?? err) }, 'export_lease_lost')
      return
    }
    const reason = reasonOf(err)
    if (job.attempts >= maxAttempts) {
      await jobs.fail(job, reason)
      outcomes.inc({ outcome: 'failed' })
      log.error({ err, exportId: job.id, attempts: job.attempts }, 'export_failed')
      return
    }
    await jobs.retry(job, reason, retrySchedule[job.attempts - 1] as number)
    outcomes.inc({ outcome: 'retried' })
    log.warn({ err, exportId: job.id, attempts: job.attempts }, 'export_attempt_failed')
  }

  async function run(job: ClaimedExport): Promise<void> {
    if (job.attempts > maxAttempts) {
      // Claimed again after its lease ran out, every time: its process keeps dying on it.
      await jobs.fail(job, `the process running it stopped ${job.attempts - 1} times before it finished`)
      outcomes.inc({ outcome: 'failed' })
      return
    }
    if (await deletions.isDeleted(job.organizationId)) {
      await dropDeleted(job)
      return
    }
    const lost = new AbortController()
    const deleted = new AbortController()
    const signal = AbortSignal.any([lost.signal, deleted.signal, stopping.signal])
    const release = holdLease(job, lost, deleted)
    const started = Date.now()
    const deps = { ...options, countBytes: (bytes: number) => jobs.recordBytes(job.organizationId, bytes) }
    try {
      const manifest = await runExport(deps, job, signal, () => jobs.renew(job, leaseMs))
      release()
      // Deleted while its manifest was written: what it wrote goes, as the deletion expects.
      if (deleted.signal.aborted) throw deleted.signal.reason
      if (await jobs.succeed(job, manifest)) {
        outcomes.inc({ outcome: 'succeeded' })
        rowsExported.inc({ format: job.format }, manifest.total_rows)
        bytesExported.inc(
          { format: job.format },
          manifest.files.reduce((sum, f) => sum + f.bytes, 0),
        )
        log.info(
          {
            exportId: job.id,
            organizationId: job.organizationId,
            rows: manifest.total_rows,
            files: manifest.files.length,
            ms: Date.now() - started,
          },
          'export_succeeded',
        )
      } else log.warn({ exportId: job.id }, 'export_lease_lost')
    } catch (err) {
      release()
      await settle(job, err, lost.signal, deleted.signal)
    }
  }

  function start(job: ClaimedExport): void {
    running.inc()
    const done = run(job)
      .catch((err: unknown) => log.error({ err, exportId: job.id }, 'export_outcome_not_written'))
      .finally(() => {
        running.dec()
        runs.delete(done)
        wake()
      })
    runs.add(done)
  }

  /** Holds back the due jobs of organizations past their bytes per hour, the reason shown. */
  async function holdBackOverLimit(): Promise<void> {
    for (const over of await jobs.overLimit(maxBytesPerHour)) {
      const reason = `its organization's export files of the last hour hold ${bytesText(over.bytes)}, at least its limit of ${bytesText(maxBytesPerHour)} (TALLY_EXPORT_MAX_BYTES_PER_HOUR); it runs once they fall below it`
      const held = await jobs.holdBack(over.organizationId, over.until, reason)
      heldBack.inc(held)
      if (held > 0)
        log.info(
          { organizationId: over.organizationId, held, until: over.until },
          'export_organization_held_back',
        )
    }
  }

  /** One pass over due work; resolves with how long to sleep before the next. */
  async function pass(): Promise<number> {
    const created = await jobs.enqueueScheduled(options.settleMs, 1_000, options.maxPending)
    if (created > 0) log.info({ created }, 'export_schedules_enqueued')
    await holdBackOverLimit()
    if (Date.now() - forgotAt >= FORGET_EVERY_MS) {
      await jobs.forgetOldBytes()
      forgotAt = Date.now()
    }
    while (runs.size < concurrency && !stopping.signal.aborted) {
      const job = await jobs.claim(leaseMs, maxBytesPerHour)
      if (!job) break
      start(job)
    }
    // Full: a finished job wakes the loop. Otherwise the next due job may be close.
    if (runs.size >= concurrency) return pollMs
    const dueIn = await jobs.nextDueInMs()
    return Math.max(MIN_WAIT_MS, Math.min(pollMs, dueIn ?? pollMs))
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      woken = false
      let waitMs: number
      try {
        waitMs = await pass()
      } catch (err) {
        log.error({ err }, 'export_worker_step_failed')
        // Postgres or a statement failed: look again soon, not after a long poll.
        waitMs = Math.min(pollMs, ERROR_WAIT_MS)
      }
      passes.inc()
      await sleep(waitMs)
    }
  })()

  return {
    /** Claims nothing more, interrupts running jobs and gives them back (due at once). */
    async stop(): Promise<void> {
      stopping.abort(new Error('shutting down'))
      interrupt?.()
      await loop
      await Promise.all(runs)
      await listener.unlisten().catch((err: unknown) => log.warn({ err }, 'export_unlisten_failed'))
    },
  }
}
