import type { BlobStore } from './blobs/blob-store.ts'
import { openBlobStore } from './blobs/open.ts'
import { type ClickHouseHandle, openClickHouse } from './clickhouse/client.ts'
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
        const ch = await openClickHouse(config, log)
        shutdown.add('clickhouse', () => ch.close())
        const lock = postgresMigrationLock((await postgres).sql, CLICKHOUSE_MIGRATION_LOCK_TIMEOUT_MS)
        await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, log, {
          lock,
          layout: ch.layout,
          nodes: ch.nodes,
        })
        await ensureSqlViews(ch.client, config.CLICKHOUSE_DATABASE, ch.layout, ch.nodes)
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
