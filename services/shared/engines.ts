import type { BlobStore } from './blobs/blob-store.ts'
import { openBlobStore } from './blobs/open.ts'
import { type ClickHouseHandle, openClickHouse } from './clickhouse/client.ts'
import { causedByClickHouseUnavailable } from './clickhouse/errors.ts'
import { applyRetention } from './clickhouse/retention.ts'
import { ensureSqlViews } from './clickhouse/sql-views.ts'
import { type Config, publicUrl } from './config.ts'
import type { Logger } from './logger.ts'
import { migrateClickHouse, migratePostgres, postgresMigrationLock } from './migrate.ts'
import { openPostgres, type PostgresHandle } from './postgres.ts'
import type { Shutdown } from './shutdown.ts'

export const SCHEMAS_DIR = new URL('../../schemas/', import.meta.url).pathname

/**
 * How long a start waits for another process's ClickHouse migration (a backfill may take minutes
 * on a large table) before it gives up naming the lock.
 */
const CLICKHOUSE_MIGRATION_LOCK_TIMEOUT_MS = 15 * 60_000

export interface Engines {
  postgres?: PostgresHandle
  clickhouse?: ClickHouseHandle
  blobs?: BlobStore
}

/**
 * Opens the engines a process needs (each from its env var, or embedded), applies their
 * migrations, and registers their closing with the process's shutdown.
 */
export async function openEngines(
  config: Config,
  log: Logger,
  shutdown: Shutdown,
  needs: { postgres?: boolean; clickhouse?: boolean; blobs?: boolean },
  publicBaseUrl: () => string = () => publicUrl(config),
): Promise<Engines> {
  const engines: Engines = {}
  const started = Date.now()
  // Opened once, shared: ClickHouse's migrations take their lock in Postgres.
  const postgres = needs.postgres
    ? openPostgres(config, log).then((pg) => {
        shutdown.add('postgres', () => pg.close())
        return pg
      })
    : undefined
  await Promise.all([
    postgres?.then(async (pg) => {
      await migratePostgres(pg.sql, `${SCHEMAS_DIR}postgres`, log)
      engines.postgres = pg
    }),
    needs.clickhouse &&
      (async () => {
        if (!postgres)
          throw new Error(
            'a process that migrates ClickHouse needs Postgres: its migration lock is kept there',
          )
        const retrying = clickHouseStartUp(config, log)
        const ch = await retrying('connect', () => openClickHouse(config, log))
        shutdown.add('clickhouse', () => ch.close())
        const lock = postgresMigrationLock((await postgres).sql, CLICKHOUSE_MIGRATION_LOCK_TIMEOUT_MS)
        // A run stopped by a dropped connection resumes at its first unrecorded step (migrate.ts).
        await retrying('migrations', () =>
          migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, log, {
            lock,
            layout: ch.layout,
            nodes: ch.nodes,
          }),
        )
        await retrying('sql views', () =>
          ensureSqlViews(ch.client, config.CLICKHOUSE_DATABASE, ch.layout, ch.nodes),
        )
        await retrying('retention', () =>
          applyRetention(ch.client, ch.layout, config.TALLY_RETENTION_DAYS, log),
        )
        engines.clickhouse = ch
      })(),
    needs.blobs &&
      (async () => {
        const blobs = await openBlobStore(config, publicBaseUrl)
        shutdown.add('blobs', () => blobs.close())
        engines.blobs = blobs
      })(),
  ])
  log.info(
    {
      ms: Date.now() - started,
      postgres: engines.postgres?.describe,
      clickhouse: engines.clickhouse?.describe,
      blobs: engines.blobs?.kind,
    },
    'engines_ready',
  )
  return engines
}

/**
 * Runs ClickHouse's start-up steps again while the server, or a node of the cluster, cannot take
 * them (refused, reset, a shard unreachable: a server restarting beside this process), until
 * TALLY_CLICKHOUSE_STARTUP_TIMEOUT from the first step; then fails naming the step, the server and
 * the deadline. Every step is idempotent. Any other failure (a refused statement, the migration
 * lock's own deadline) ends the start at once.
 */
export function clickHouseStartUp(config: Config, log: Logger) {
  const deadline = Date.now() + config.TALLY_CLICKHOUSE_STARTUP_TIMEOUT
  const where = config.CLICKHOUSE_URL
    ? config.CLICKHOUSE_URL.replace(/\/\/[^@/]*@/, '//***@')
    : 'the embedded server'
  return async <T>(step: string, run: () => Promise<T>): Promise<T> => {
    for (let attempt = 1, pause = 100; ; attempt++, pause = Math.min(pause * 2, 2_000)) {
      try {
        return await run()
      } catch (err) {
        if (!causedByClickHouseUnavailable(err)) throw err
        const left = deadline - Date.now()
        if (left <= pause)
          throw new Error(
            `ClickHouse at ${where}: ${step} could not reach the server within ${config.TALLY_CLICKHOUSE_STARTUP_TIMEOUT} ms (TALLY_CLICKHOUSE_STARTUP_TIMEOUT, ${attempt} attempts): ${(err as Error).message}`,
            { cause: err },
          )
        log.warn({ engine: 'clickhouse', step, attempt, retryInMs: pause, err }, 'clickhouse_startup_retry')
        await new Promise((resolve) => setTimeout(resolve, pause))
      }
    }
  }
}
