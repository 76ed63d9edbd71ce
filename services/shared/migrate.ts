import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ClickHouseClient } from './clickhouse/client.ts'
import { type ClickHouseLayout, ledgerDdl, planStatements, SINGLE_NODE } from './clickhouse/cluster-ddl.ts'
import type { Logger } from './logger.ts'
import type { Sql } from './postgres.ts'

type ReservedSql = Awaited<ReturnType<Sql['reserve']>>

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

/** An advisory lock not taken within its wait: the message names the lock and who holds it. */
export class LockWaitExceeded extends Error {}

/**
 * Takes a session-level advisory lock on a reserved connection, waiting at most `timeoutMs`
 * (lock_timeout) and then failing with an error that names the lock and who holds it.
 */
async function advisoryLock(reserved: ReservedSql, id: number, timeoutMs: number, holder: string) {
  await reserved`select set_config('lock_timeout', ${`${timeoutMs}ms`}, false)`
  try {
    await reserved`select pg_advisory_lock(${id})`
  } catch (err) {
    if ((err as { code?: string }).code !== '55P03') throw err
    throw new LockWaitExceeded(`waited ${timeoutMs} ms for Postgres advisory lock ${id}, held by ${holder}`)
  } finally {
    // Back to the role's or database's own setting, on this connection the pool keeps.
    await reserved`reset lock_timeout`.catch(() => {})
  }
}

/**
 * Applies the migrations not yet recorded, each in its own transaction, under an advisory lock
 * so that several processes starting at once apply each file exactly once. Waiting for the lock
 * ends after `lockTimeoutMs`. A number recorded under another name stops it: that database had
 * another file applied under the number.
 */
export async function migratePostgres(
  sql: Sql,
  dir: string,
  log: Logger,
  lockTimeoutMs = 15 * 60_000,
): Promise<number[]> {
  const migrations = await readMigrations(dir)
  const reserved = await sql.reserve()
  try {
    await advisoryLock(
      reserved,
      MIGRATION_LOCK,
      lockTimeoutMs,
      'another Tally process that is migrating Postgres (the Postgres migration lock)',
    )
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

/** Held around a ClickHouse migration run, so that concurrent starts apply each step once. */
export type MigrationLock = <T>(run: () => Promise<T>) => Promise<T>

// Not MIGRATION_LOCK: a process may migrate Postgres and ClickHouse at the same time.
const CLICKHOUSE_MIGRATION_LOCK = 7_461_680

/**
 * ClickHouse has no locks, nor a compare-and-set a lease row could rest on (an INSERT then a read
 * races; ReplacingMergeTree collapses rows only eventually). Every Tally process that migrates
 * ClickHouse also has Postgres, shared by all of them: its advisory lock serialises the runs. It is
 * a session lock on one reserved connection, released when the run ends or, if the process dies,
 * when Postgres sees its connection close. Waiting for it ends after `timeoutMs` (lock_timeout),
 * with an error that says what was waited for.
 */
export function postgresMigrationLock(sql: Sql, timeoutMs: number): MigrationLock {
  return async (run) => {
    const reserved = await sql.reserve()
    try {
      await advisoryLock(
        reserved,
        CLICKHOUSE_MIGRATION_LOCK,
        timeoutMs,
        'another Tally process that is migrating ClickHouse (the ClickHouse migration lock)',
      )
      try {
        return await run()
      } finally {
        await reserved`select pg_advisory_unlock(${CLICKHOUSE_MIGRATION_LOCK})`.catch(() => {})
      }
    } finally {
      reserved.release()
    }
  }
}

export interface ClickHouseMigrationOptions {
  /** Serialises concurrent runs (postgresMigrationLock). Without it, runs may repeat steps. */
  lock?: MigrationLock
  /** Single node (default) or a cluster (clickhouse/cluster-ddl.ts). */
  layout?: ClickHouseLayout
  /** Per-node cluster DDL: a client for every node, the ledger's own node included. */
  nodes?: readonly ClickHouseClient[]
  /**
   * Called after each step is applied and recorded. Tests use it to stop a run between steps
   * (a thrown error ends the run there; a process killed here is a crash mid-migration).
   */
  afterStep?: (step: { version: number; name: string; step: number; of: number }) => Promise<void>
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * Applies the migration files not yet recorded, one step (statement) at a time, recording each
 * step in `schema_migration_steps` as it completes and each file in `schema_migrations` once all of
 * its steps are. A run that stops half-way (killed, a node unreachable) leaves the steps done so
 * far recorded: the next run resumes at the first unrecorded step, so no file is ever left half
 * applied. A step killed while it ran is run again in full, which is why every statement in
 * schemas/clickhouse must be idempotent (IF NOT EXISTS; a backfill whose repetition changes
 * nothing). Refuses a database whose record gives a number to another file, or a step to another
 * statement: that database was migrated by another version of Tally.
 */
export async function migrateClickHouse(
  client: ClickHouseClient,
  dir: string,
  log: Logger,
  options: ClickHouseMigrationOptions = {},
): Promise<number[]> {
  const migrations = await readMigrations(dir)
  const layout = options.layout ?? SINGLE_NODE
  const nodes = options.nodes ?? [client]
  const tables = new Set<string>()
  // Planned before anything runs: a statement without a cluster form stops the run untouched.
  const plans = migrations.map((m) => ({
    ...m,
    steps: planStatements(splitStatements(m.sql), layout, tables),
  }))
  const run = async () => {
    await checkLayout(client, layout, tables)
    for (const query of ledgerDdl(layout)) await client.command({ query })
    const files = await rows<{ version: number; name: string }>(
      client,
      'SELECT DISTINCT version, name FROM schema_migrations',
    )
    const steps = await rows<{ version: number; name: string; step: number; statement_sha256: string }>(
      client,
      'SELECT DISTINCT version, name, step, statement_sha256 FROM schema_migration_steps',
    )
    const done = new Map(files.map((f) => [Number(f.version), f.name]))
    const applied: number[] = []
    for (const m of plans) {
      const label = `${m.version}_${m.name}`
      const recorded = [
        done.get(m.version),
        ...steps.filter((s) => Number(s.version) === m.version).map((s) => s.name),
      ]
      const other = recorded.find((name) => name !== undefined && name !== m.name)
      if (other !== undefined)
        throw new Error(
          `clickhouse migration ${m.version} is recorded as ${m.version}_${other}, but this version of Tally's is ${label}: the database was migrated by another version of Tally`,
        )
      if (done.has(m.version)) continue
      const stepsDone = new Map(
        steps.filter((s) => Number(s.version) === m.version).map((s) => [Number(s.step), s.statement_sha256]),
      )
      if (stepsDone.size > 0)
        log.warn({ migration: label, stepsDone: stepsDone.size }, 'clickhouse_migration_resumed')
      for (const [i, step] of m.steps.entries()) {
        const hash = sha256(step.sql)
        const was = stepsDone.get(i)
        if (was !== undefined && was !== hash)
          throw new Error(
            `clickhouse migration ${label}: step ${i} was applied as another statement than this version of Tally's: the database was migrated by another version of Tally`,
          )
        if (was === undefined) {
          for (const node of step.nodes === 'each' ? nodes : [client]) {
            try {
              await node.command({ query: step.sql })
            } catch (err) {
              throw new Error(
                `clickhouse migration ${label} failed at step ${i}: ${(err as Error).message}`,
                {
                  cause: err,
                },
              )
            }
          }
          await client.insert({
            table: 'schema_migration_steps',
            values: [{ version: m.version, name: m.name, step: i, statement_sha256: hash }],
            format: 'JSONEachRow',
          })
        }
        await options.afterStep?.({ version: m.version, name: m.name, step: i, of: m.steps.length })
      }
      await client.insert({
        table: 'schema_migrations',
        values: [{ version: m.version, name: m.name }],
        format: 'JSONEachRow',
      })
      applied.push(m.version)
      log.info({ migration: label, steps: m.steps.length }, 'clickhouse_migration_applied')
    }
    return applied
  }
  return options.lock ? options.lock(run) : run()
}

/**
 * Refuses a database built for the other layout: its files are recorded as done, so nothing would
 * rebuild its tables, and Tally would read a node's share of the data as all of it (or the reverse).
 * Moving data between layouts is an operator's job (docs/operations.md).
 */
async function checkLayout(
  client: ClickHouseClient,
  layout: ClickHouseLayout,
  tables: Set<string>,
): Promise<void> {
  const found = await rows<{ name: string; engine: string }>(
    client,
    'SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND has({tables:Array(String)}, name)',
    { tables: [...tables] },
  )
  const cluster = layout.kind === 'cluster'
  const other = found.find((t) => (t.engine === 'Distributed') !== cluster)
  if (other)
    throw new Error(
      `clickhouse table ${other.name} is ${other.engine}: the database was built ${cluster ? 'for one node' : 'for a cluster'}, ` +
        `and TALLY_CLICKHOUSE_CLUSTER is ${cluster ? 'set' : 'unset'}; Tally does not move data between the two (docs/operations.md)`,
    )
}

async function rows<T>(
  client: ClickHouseClient,
  query: string,
  params?: Record<string, unknown>,
): Promise<T[]> {
  return (
    await client.query({ query, format: 'JSONEachRow', ...(params ? { query_params: params } : {}) })
  ).json<T>()
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
