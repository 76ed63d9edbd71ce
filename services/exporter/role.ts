import { createDeletedOrganizations } from '../shared/deleted-organizations.ts'
import { needed, type WorkerRole } from '../shared/process/role.ts'
import { openScratch } from '../shared/scratch.ts'
import { createExportJobs } from './jobs.ts'
import { createExportQueries } from './query.ts'
import { startExportWorker } from './worker.ts'

/** Export jobs and schedules into the object store (docs/exports.md); several replicas share them. */
export const exporterRole: WorkerRole = {
  name: 'exporter',
  needs: { postgres: true, clickhouse: true, blobs: true },
  async start({ config, engines, log, shutdown }) {
    if (config.TALLY_EXPORT_CONCURRENCY === 0) {
      log.info('exporter_disabled')
      return
    }
    const { sql } = needed(engines.postgres, 'postgres', 'exporter')
    // Both closed after the worker stops (steps run in reverse): its parts are written in the
    // scratch folder, and its jobs listen for deletions until they end.
    const scratch = await openScratch(config.TALLY_DATA_DIR, log)
    shutdown.add('scratch folder', () => scratch.close())
    const deletions = await createDeletedOrganizations(sql, log)
    shutdown.add('deleted organizations', () => deletions.close())
    const worker = await startExportWorker({
      sql,
      jobs: createExportJobs(sql),
      queries: createExportQueries(needed(engines.clickhouse, 'clickhouse', 'exporter').client, {
        timeoutMs: config.TALLY_EXPORT_QUERY_TIMEOUT,
        maxThreads: config.TALLY_QUERY_MAX_THREADS,
      }),
      blobs: needed(engines.blobs, 'blobs', 'exporter'),
      log: log.child({ component: 'exporter' }),
      concurrency: config.TALLY_EXPORT_CONCURRENCY,
      partRows: config.TALLY_EXPORT_PART_ROWS,
      stepTimeoutMs: config.TALLY_EXPORT_QUERY_TIMEOUT,
      leaseMs: config.TALLY_EXPORT_LEASE,
      pollMs: config.TALLY_EXPORT_POLL_INTERVAL,
      settleMs: config.TALLY_EXPORT_SETTLE_DELAY,
      maxPending: config.TALLY_EXPORT_MAX_PENDING,
      maxBytesPerHour: config.TALLY_EXPORT_MAX_BYTES_PER_HOUR,
      retrySchedule: config.TALLY_EXPORT_RETRY_SCHEDULE,
      scratchDir: scratch.dir,
      deletions,
    })
    // Stopped before the engines close: running exports are handed back, due at once.
    shutdown.add('exporter', () => worker.stop())
    log.info({ concurrency: config.TALLY_EXPORT_CONCURRENCY }, 'exporter_started')
  },
}
