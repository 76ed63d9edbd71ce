import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ClickHouseClient } from './clickhouse/client.ts'
import type { Logger } from './logger.ts'
import type { Sql } from './postgres.ts'

export interface Migration {
  version: number
  name: string
  sql: string
}

const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/

export async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort()
  const migrations: Migration[] = []
  for (const file of files) {
    const m = FILE.exec(file)
    if (!m) throw new Error(`migration file ${file} is not named NNNN_name.sql`)
    migrations.push({
      version: Number(m[1]),
      name: m[2] as string,
      sql: await readFile(join(dir, file), 'utf8'),
    })
  }
  const seen = new Set<number>()
  for (const { version } of migrations) {
    if (seen.has(version)) throw new Error(`two migrations in ${dir} share number ${version}`)
    seen.add(version)
  }
  return migrations
}

// Any constant will do; it only has to be the same in every Tally process.
const MIGRATION_LOCK = 7_461_679

/**
 * Applies the migrations not yet recorded, each in its own transaction, under an advisory lock
 * so that several processes starting at once apply each file exactly once. A number recorded
 * under another name stops it: that database had another file applied under the number.
 */
export async function migratePostgres(sql: Sql, dir: string, log: Logger): Promise<number[]> {
  const migrations = await readMigrations(dir)
  const reserved = await sql.reserve()
  try {
    await reserved`select pg_advisory_lock(${MIGRATION_LOCK})`
    await reserved`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`
    const done = new Map(
      (await reserved<{ version: number; name: string }[]>`select version, name from schema_migrations`).map(
        (r) => [r.version, r.name],
      ),
    )
    const applied: number[] = []
    for (const m of migrations) {
      const recorded = done.get(m.version)
      if (recorded === m.name) continue
      // Another file under this number was applied (a database migrated by another line of
      // development): skipping ours would leave its tables missing.
      if (recorded !== undefined) {
        throw new Error(
          `postgres migration ${m.version} is recorded as ${m.version}_${recorded}, but this version of Tally's is ${m.version}_${m.name}: the database was migrated by another version of Tally`,
        )
      }
      await reserved.unsafe('begin')
      try {
        // DDL files are ours, never user input: run as a simple-query batch.
        await reserved.unsafe(m.sql)
        await reserved`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`
        await reserved.unsafe('commit')
      } catch (err) {
        await reserved.unsafe('rollback')
        throw new Error(`postgres migration ${m.version}_${m.name} failed: ${(err as Error).message}`)
      }
      applied.push(m.version)
      log.info({ migration: `${m.version}_${m.name}` }, 'postgres_migration_applied')
    }
    return applied
  } finally {
    await reserved`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {})
    reserved.release()
  }
}

/**
 * ClickHouse has no transactions or locks: every statement in schemas/clickhouse is written
 * to be idempotent (IF NOT EXISTS), so concurrent starts are harmless, and applied files are
 * recorded so that a later start skips them.
 */
export async function migrateClickHouse(
  client: ClickHouseClient,
  dir: string,
  log: Logger,
): Promise<number[]> {
  const migrations = await readMigrations(dir)
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime64(3) DEFAULT now64(3))
            ENGINE = ReplacingMergeTree ORDER BY version`,
  })
  const rs = await client.query({
    query: 'SELECT DISTINCT version FROM schema_migrations',
    format: 'JSONEachRow',
  })
  const done = new Set((await rs.json<{ version: number }>()).map((r) => Number(r.version)))
  const applied: number[] = []
  for (const m of migrations) {
    if (done.has(m.version)) continue
    for (const statement of splitStatements(m.sql)) {
      try {
        await client.command({ query: statement })
      } catch (err) {
        throw new Error(`clickhouse migration ${m.version}_${m.name} failed: ${(err as Error).message}`)
      }
    }
    await client.insert({
      table: 'schema_migrations',
      values: [{ version: m.version, name: m.name }],
      format: 'JSONEachRow',
    })
    applied.push(m.version)
    log.info({ migration: `${m.version}_${m.name}` }, 'clickhouse_migration_applied')
  }
  return applied
}

/** Splits a DDL file on semicolons that end a line; strips `--` comment lines. */
export function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}
