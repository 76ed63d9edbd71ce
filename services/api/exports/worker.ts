import { ClickHouseError } from '@clickhouse/client'
import { Counter } from 'prom-client'
import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import type { DeletedOrganizations } from '../../shared/deleted-organizations.ts'
import { AppError } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import type { ExportQueries } from './query.ts'
import type { ClaimedExport, ExportRepo } from './repo.ts'
import { CountMismatch, exportPrefix, LeaseLost, runExport } from './service.ts'

const outcomes = new Counter({
  name: 'tally_exports_total',
  help: 'Export attempts by what followed: succeeded, retried (due again later) or failed (for good)',
  labelNames: ['outcome'] as const,
})
const rowsExported = new Counter({
  name: 'tally_export_rows_total',
  help: 'Rows written by succeeded exports, by format',
  labelNames: ['format'] as const,
})
const bytesExported = new Counter({
  name: 'tally_export_bytes_total',
  help: 'Bytes of the files of succeeded exports, by format',
  labelNames: ['format'] as const,
})

export interface ExportWorkerOptions {
  repo: ExportRepo
  queries: ExportQueries
  blobs: BlobStore
  log: Logger
  /** Jobs this process runs at once. */
  concurrency: number
  partRows: number
  /** How long one step (a ClickHouse query, a file's upload) may take. */
  stepTimeoutMs: number
  leaseMs: number
  pollMs: number
  settleMs: number
  /** Exports of one schedule queued or running at once; its later windows wait. */
  maxPending: number
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

/**
 * Runs exports and turns schedules into exports. Jobs are claimed from Postgres (repo.claim), so
 * any number of API processes share them and none runs a job another holds; the lease is renewed
 * every third of its length while the job runs, and a job whose process died comes due again when
 * its lease ends. A failed attempt is written back as data (due again after the retry schedule's
 * next wait, with its reason) until the attempts run out; then the export is failed, reason kept.
 */
export function startExportWorker(options: ExportWorkerOptions) {
  const { repo, log, leaseMs, pollMs, retrySchedule, deletions } = options
  const maxAttempts = retrySchedule.length + 1
  const stopping = new AbortController()
  const sleepers = new Set<() => void>()

  const sleep = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        sleepers.delete(done)
        resolve()
      }
      const timer = setTimeout(done, pollMs)
      sleepers.add(done)
    })

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
        else if (await repo.renew(job, leaseMs)) expiresAt = Date.now() + leaseMs
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
    await repo.fail(job, ORGANIZATION_DELETED)
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
      await repo.release(job)
      log.info({ exportId: job.id }, 'export_released_at_shutdown')
      return
    }
    if (lost.aborted || err instanceof LeaseLost) {
      log.warn({ exportId: job.id, reason: String(lost.reason ?? err) }, 'export_lease_lost')
      return
    }
    const reason = reasonOf(err)
    if (job.attempts >= maxAttempts) {
      await repo.fail(job, reason)
      outcomes.inc({ outcome: 'failed' })
      log.error({ err, exportId: job.id, attempts: job.attempts }, 'export_failed')
      return
    }
    await repo.retry(job, reason, retrySchedule[job.attempts - 1] as number)
    outcomes.inc({ outcome: 'retried' })
    log.warn({ err, exportId: job.id, attempts: job.attempts }, 'export_attempt_failed')
  }

  async function run(job: ClaimedExport): Promise<void> {
    if (job.attempts > maxAttempts) {
      // Claimed again after its lease ran out, every time: its process keeps dying on it.
      await repo.fail(job, `the process running it stopped ${job.attempts - 1} times before it finished`)
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
    try {
      const manifest = await runExport(options, job, signal, () => repo.renew(job, leaseMs))
      release()
      // Deleted while its manifest was written: what it wrote goes, as the deletion expects.
      if (deleted.signal.aborted) throw deleted.signal.reason
      if (await repo.succeed(job, manifest)) {
        outcomes.inc({ outcome: 'succeeded' })
        rowsExported.inc({ format: job.format }, manifest.total_rows)
        bytesExported.inc(
          { format: job.format },
          manifest.files.reduce((sum, f) => sum + f.bytes, 0),
        )
        log.info(
          {
            exportId: job.id,
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

  async function loop(first: boolean): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        if (first) {
          const created = await repo.enqueueScheduled(options.settleMs, 1_000, options.maxPending)
          if (created > 0) log.info({ created }, 'export_schedules_enqueued')
        }
        const job = await repo.claim(leaseMs)
        if (job) {
          await run(job)
          continue
        }
      } catch (err) {
        log.error({ err }, 'export_worker_step_failed')
      }
      if (!stopping.signal.aborted) await sleep()
    }
  }

  const loops = Array.from({ length: options.concurrency }, (_, i) => loop(i === 0))

  return {
    /** Looks for due work now (an export was just created). */
    wake(): void {
      for (const wake of [...sleepers]) wake()
    },
    /** Claims nothing more, interrupts running jobs and gives them back (due at once). */
    async stop(): Promise<void> {
      stopping.abort(new Error('shutting down'))
      for (const wake of [...sleepers]) wake()
      await Promise.all(loops)
    },
  }
}

export type ExportWorker = ReturnType<typeof startExportWorker>
