import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import postgres from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { type ClickHouseHandle, openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { SCHEMAS_DIR } from '../../services/shared/engines.ts'
import {
  migrateClickHouse,
  postgresMigrationLock,
  readMigrations,
  splitStatements,
} from '../../services/shared/migrate.ts'
import { engines } from '../support/harness.ts'
import { cleanUpProcesses, spawnCommand, waitForOutput } from '../support/processes.ts'

const log = pino({ level: 'silent' })
const DIR = `${SCHEMAS_DIR}clickhouse`
const ROOT = new URL('../../', import.meta.url).pathname

const handles: ClickHouseHandle[] = []
const pools: postgres.Sql[] = []
const databases: string[] = []
afterAll(async () => {
  await cleanUpProcesses()
  await Promise.all(handles.map((h) => h.close()))
  const admin = await openClickHouse(loadConfig({ CLICKHOUSE_URL: engines().clickhouseUrl }), log)
  for (const db of databases) await admin.client.command({ query: `DROP DATABASE IF EXISTS ${db}` })
  await admin.close()
  await Promise.all(pools.map((p) => p.end()))
})

/** A ClickHouse client on a database of its own: a fresh database stands in for a fresh server. */
async function freshDatabase(name = `ledger_${randomUUID().slice(0, 8)}`) {
  if (!databases.includes(name)) databases.push(name)
  const ch = await openClickHouse(
    loadConfig({ CLICKHOUSE_URL: engines().clickhouseUrl, CLICKHOUSE_DATABASE: name }),
    log,
  )
  handles.push(ch)
  return { name, ch }
}

function lock(timeoutMs = 20_000) {
  const pool = postgres(engines().postgresUrl, { onnotice: () => {}, max: 1 })
  pools.push(pool)
  return postgresMigrationLock(pool, timeoutMs)
}

async function rows<T>(ch: ClickHouseHandle, query: string): Promise<T[]> {
  return (await ch.client.query({ query, format: 'JSONEachRow' })).json<T>()
}

/** Every recorded step, duplicates included (no FINAL, no DISTINCT): a step applied twice shows twice. */
const recordedSteps = async (ch: ClickHouseHandle) =>
  (
    await rows<{ version: number; step: number }>(
      ch,
      'SELECT version, step FROM schema_migration_steps ORDER BY version, step',
    )
  ).map((r) => `${r.version}/${r.step}`)

const recordedFiles = async (ch: ClickHouseHandle) =>
  (await rows<{ version: number }>(ch, 'SELECT version FROM schema_migrations ORDER BY version')).map((r) =>
    Number(r.version),
  )

async function allSteps(dir = DIR): Promise<string[]> {
  const files = await readMigrations(dir)
  return files.flatMap((f) => splitStatements(f.sql).map((_, i) => `${f.version}/${i}`))
}

describe('clickhouse migrations: ledger and lock', () => {
  it('apply every step exactly once when several processes start at once', async () => {
    const { name } = await freshDatabase()
    const runners = await Promise.all([0, 1, 2, 3].map(() => freshDatabase(name)))
    const runs = await Promise.all(
      runners.map(({ ch }) => migrateClickHouse(ch.client, DIR, log, { lock: lock() })),
    )
    const files = (await readMigrations(DIR)).map((f) => f.version)
    // One run applied everything; the others, waiting on the lock, found it done.
    expect(runs.flat().sort()).toEqual(files)
    expect(runs.filter((r) => r.length > 0)).toHaveLength(1)
    const ch = (runners[0] as { ch: ClickHouseHandle }).ch
    expect(await recordedSteps(ch)).toEqual(await allSteps())
    expect(await recordedFiles(ch)).toEqual(files)
  })

  it('complete a run killed with SIGKILL between two steps on the next start', async () => {
    const { name, ch } = await freshDatabase()
    const script = `
      import { pino } from 'pino'
      import postgres from 'postgres'
      import { openClickHouse } from '${ROOT}services/shared/clickhouse/client.ts'
      import { loadConfig } from '${ROOT}services/shared/config.ts'
      import { migrateClickHouse, postgresMigrationLock } from '${ROOT}services/shared/migrate.ts'
      const ch = await openClickHouse(loadConfig(process.env), pino({ level: 'silent' }))
      const pg = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} })
      await migrateClickHouse(ch.client, '${DIR}', pino({ level: 'silent' }), {
        lock: postgresMigrationLock(pg, 20_000),
        async afterStep({ version, step }) {
          if (version !== 2 || step !== 0) return
          console.log('paused after 2/0')
          // Killed here by the test; never waits forever if it is not.
          await new Promise((resolve) => setTimeout(resolve, 60_000))
          process.exit(3)
        },
      })
    `
    const child = spawnCommand(process.execPath, ['--input-type=module', '-e', script], {
      ...process.env,
      CLICKHOUSE_URL: engines().clickhouseUrl,
      CLICKHOUSE_DATABASE: name,
      DATABASE_URL: engines().postgresUrl,
    })
    await waitForOutput(child, (out) => out.includes('paused after 2/0'), {
      what: 'the migrating child to stop after step 0 of 0002',
      timeoutMs: 20_000,
    })
    child.child.kill('SIGKILL')
    expect(await child.exited).toBeNull()

    // Half of 0002 applied: session_hours exists, its view does not; 0002 is not recorded as done.
    expect(await recordedFiles(ch)).toEqual([1])
    expect(await recordedSteps(ch)).toEqual(['1/0', '2/0'])
    const tables = async () =>
      (
        await rows<{ name: string }>(
          ch,
          `SELECT name FROM system.tables WHERE database = '${name}' AND name LIKE 'session_hours%' ORDER BY name`,
        )
      ).map((r) => r.name)
    expect(await tables()).toEqual(['session_hours'])
    // A row written while the migration was stopped: the resumed backfill must count it.
    const org = randomUUID()
    await ch.client.insert({
      table: 'request_response_rmt',
      values: [
        {
          organization_id: org,
          request_id: randomUUID(),
          request_created_at: '2026-01-02 03:04:05.000',
          response_created_at: '2026-01-02 03:04:06.000',
          session_id: 'kept',
        },
      ],
      format: 'JSONEachRow',
    })

    // The next start, waiting on the lock the killed process held until Postgres dropped its connection.
    const versions = (await readMigrations(DIR)).map((f) => f.version)
    expect(await migrateClickHouse(ch.client, DIR, log, { lock: lock() })).toEqual(versions.slice(1))
    expect(await recordedSteps(ch)).toEqual(await allSteps())
    expect(await recordedFiles(ch)).toEqual(versions)
    expect(await tables()).toEqual(['session_hours', 'session_hours_mv'])
    expect(
      await rows(
        ch,
        `SELECT session_id, count() AS n FROM session_hours WHERE organization_id = '${org}' GROUP BY session_id`,
      ),
    ).toEqual([{ session_id: 'kept', n: 1 }])
    const columns = await rows<{ name: string }>(
      ch,
      `SELECT name FROM system.columns WHERE database = '${name}' AND table = 'request_response_rmt' AND name = 'trace_id'`,
    )
    expect(columns).toHaveLength(1)
  })

  it('refuse a database whose record gives a number to another file', async () => {
    const { ch } = await freshDatabase()
    const dir = mkdtempSync(join(tmpdir(), 'tally-ch-migrations-'))
    try {
      writeFileSync(
        join(dir, '0001_first.sql'),
        'CREATE TABLE IF NOT EXISTS first (id UInt32) ENGINE = MergeTree ORDER BY id;',
      )
      writeFileSync(
        join(dir, '0002_other_line.sql'),
        'CREATE TABLE IF NOT EXISTS other_line (id UInt32) ENGINE = MergeTree ORDER BY id;',
      )
      expect(await migrateClickHouse(ch.client, dir, log)).toEqual([1, 2])
      rmSync(join(dir, '0002_other_line.sql'))
      writeFileSync(
        join(dir, '0002_this_line.sql'),
        'CREATE TABLE IF NOT EXISTS this_line (id UInt32) ENGINE = MergeTree ORDER BY id;',
      )
      writeFileSync(
        join(dir, '0003_third.sql'),
        'CREATE TABLE IF NOT EXISTS third (id UInt32) ENGINE = MergeTree ORDER BY id;',
      )
      await expect(migrateClickHouse(ch.client, dir, log)).rejects.toThrow(
        "clickhouse migration 2 is recorded as 2_other_line, but this version of Tally's is 2_this_line",
      )
      expect(await recordedFiles(ch)).toEqual([1, 2])
      expect(await recordedSteps(ch)).toEqual(['1/0', '2/0'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('resume a stopped file at its first unrecorded step, and refuse one whose done step changed', async () => {
    const { ch } = await freshDatabase()
    const dir = mkdtempSync(join(tmpdir(), 'tally-ch-migrations-'))
    const file = join(dir, '0001_two_steps.sql')
    const first = 'CREATE TABLE IF NOT EXISTS a (id UInt32) ENGINE = MergeTree ORDER BY id;\n'
    const second = 'CREATE TABLE IF NOT EXISTS b (id UInt32) ENGINE = MergeTree ORDER BY id;\n'
    try {
      writeFileSync(file, first + second)
      await expect(
        migrateClickHouse(ch.client, dir, log, {
          afterStep: async ({ step }) => {
            if (step === 0) throw new Error('stopped after step 0')
          },
        }),
      ).rejects.toThrow('stopped after step 0')
      expect(await recordedSteps(ch)).toEqual(['1/0'])
      expect(await recordedFiles(ch)).toEqual([])

      // Another version of Tally's file: its step 0 is not the one applied.
      writeFileSync(file, first.replace('id UInt32', 'id UInt64') + second)
      await expect(migrateClickHouse(ch.client, dir, log)).rejects.toThrow(
        "clickhouse migration 1_two_steps: step 0 was applied as another statement than this version of Tally's",
      )
      expect(await recordedSteps(ch)).toEqual(['1/0'])

      writeFileSync(file, first + second)
      expect(await migrateClickHouse(ch.client, dir, log)).toEqual([1])
      expect(await recordedSteps(ch)).toEqual(['1/0', '1/1'])
      expect(await recordedFiles(ch)).toEqual([1])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
