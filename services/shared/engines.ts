import type { BlobStore } from './blobs/blob-store.ts'
import { openBlobStore } from './blobs/open.ts'
import { type ClickHouseHandle, openClickHouse } from './clickhouse/client.ts'
import { ensureSqlViews } from './clickhouse/sql-views.ts'
import { type Config, publicUrl } from './config.ts'
import type { Logger } from './logger.ts'
import { migrateClickHouse, migratePostgres } from './migrate.ts'
import { openPostgres, type PostgresHandle } from './postgres.ts'
import type { Shutdown } from './shutdown.ts'

export const SCHEMAS_DIR = new URL('../../schemas/', import.meta.url).pathname

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
  await Promise.all([
    needs.postgres &&
      (async () => {
        const pg = await openPostgres(config, log)
        shutdown.add('postgres', () => pg.close())
        await migratePostgres(pg.sql, `${SCHEMAS_DIR}postgres`, log)
        engines.postgres = pg
      })(),
    needs.clickhouse &&
      (async () => {
        const ch = await openClickHouse(config, log)
        shutdown.add('clickhouse', () => ch.close())
        await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, log)
        await ensureSqlViews(ch.client, config.CLICKHOUSE_DATABASE)
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
