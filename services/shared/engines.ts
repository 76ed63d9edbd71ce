import type { BlobStore } from './blobs/blob-store.ts'
import { openBlobStore } from './blobs/open.ts'
import { type ClickHouseHandle, openClickHouse, withoutCredentials } from './clickhouse/client.ts'
import { causedByClickHouseUnavailable } from './clickhouse/errors.ts'
import { retentionKeeper } from './clickhouse/retention.ts'
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
  // Migrated before ClickHouse's retention is applied: it reads the organizations' own days.
  const migrated = postgres?.then(async (pg) => {
    await migratePostgres(pg.sql, `${SCHEMAS_DIR}postgres`, log)
    engines.postgres = pg
    return pg
  })
  await Promise.all([
    migrated,
    needs.clickhouse &&
      (async () => {
        if (!postgres || !migrated)
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
        // Under the migration lock: processes starting together change a TTL once, and each
        // change makes ClickHouse rewrite the stored parts.
        const retention = retentionKeeper(
          (await migrated).sql,
          ch,
          config.TALLY_RETENTION_DAYS,
          log,
          CLICKHOUSE_MIGRATION_LOCK_TIMEOUT_MS,
        )
        await retrying('retention', () => retention.apply())
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
 * Runs a ClickHouse start-up step again while a server it needs cannot take it (refused, reset, a
 * shard unreachable, an overloaded server: ClickHouse, or a node of the cluster, restarting beside
 * this process), 0.1 s doubling to 2 s between attempts, for at most
 * TALLY_CLICKHOUSE_STARTUP_TIMEOUT from the step's first such failure; then fails naming the step,
 * the server, how long and the last failure (which names the engine that failed: the migrations
 * step also waits for the migration lock in Postgres). Each attempt is bounded by the client's own
 * TALLY_CLICKHOUSE_REQUEST_TIMEOUT. Every step is idempotent. Any other failure (a refused
 * statement, the migration lock's own deadline) ends the start at once.
 */
export function clickHouseStartUp(config: Config, log: Logger) {
  const timeoutMs = config.TALLY_CLICKHOUSE_STARTUP_TIMEOUT
  const where = config.CLICKHOUSE_URL ? withoutCredentials(config.CLICKHOUSE_URL) : 'the embedded server'
  return async <T>(step: string, run: () => Promise<T>): Promise<T> => {
    let firstFailure: number | undefined
    for (let attempt = 1, pause = 100; ; attempt++, pause = Math.min(pause * 2, 2_000)) {
      try {
        return await run()
      } catch (err) {
        if (!causedByClickHouseUnavailable(err)) throw err
        firstFailure ??= Date.now()
        const failingMs = Date.now() - firstFailure
        if (failingMs >= timeoutMs)
          throw new Error(
            `ClickHouse at ${where}: ${step} failed for ${failingMs} ms while a server it needs was unavailable (TALLY_CLICKHOUSE_STARTUP_TIMEOUT ${timeoutMs} ms, ${attempt} attempts); the last failure: ${(err as Error).message}`,
            { cause: err },
          )
        const wait = Math.min(pause, timeoutMs - failingMs)
        log.warn({ engine: 'clickhouse', step, attempt, retryInMs: wait, err }, 'clickhouse_startup_retry')
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }
}
