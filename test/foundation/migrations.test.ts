import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import postgres from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { SCHEMAS_DIR } from '../../services/shared/engines.ts'
import {
  migrateClickHouse,
  migratePostgres,
  readMigrations,
  splitStatements,
} from '../../services/shared/migrate.ts'
import { clickhouseEnv, engines } from '../support/harness.ts'

const log = pino({ level: 'silent' })

describe('postgres migrations', () => {
  const admin = postgres(engines().postgresUrl, { onnotice: () => {} })
  afterAll(() => admin.end())

  it('apply each file exactly once when several processes start at the same moment; again is a no-op', async () => {
    // A fresh schema stands in for a fresh database.
    const schema = `migrate_${randomUUID().replaceAll('-', '')}`
    await admin.unsafe(`create schema ${schema}`)
    const open = () =>
      postgres(engines().postgresUrl, { onnotice: () => {}, max: 2, connection: { search_path: schema } })
    const pools = [open(), open(), open()]
    try {
      const files = await readMigrations(`${SCHEMAS_DIR}postgres`)
      const runs = await Promise.all(pools.map((p) => migratePostgres(p, `${SCHEMAS_DIR}postgres`, log)))
      expect(runs.flat().sort((a, b) => a - b)).toEqual(files.map((f) => f.version))
      expect(await migratePostgres(pools[0] as postgres.Sql, `${SCHEMAS_DIR}postgres`, log)).toEqual([])
      const rows = await admin.unsafe(`select version from ${schema}.schema_migrations order by version`)
      expect(rows.map((r) => r.version)).toEqual(files.map((f) => f.version))
    } finally {
      await Promise.all(pools.map((p) => p.end()))
      await admin.unsafe(`drop schema ${schema} cascade`)
    }
  })

  it("wait for another process's migration lock only so long, then fail naming it", async () => {
    const holder = await admin.reserve()
    const pool = postgres(engines().postgresUrl, { onnotice: () => {}, max: 1 })
    try {
      // The lock every Tally process takes to migrate Postgres, held as a stuck process would.
      await holder`select pg_advisory_lock(7461679)`
      await expect(migratePostgres(pool, `${SCHEMAS_DIR}postgres`, log, 300)).rejects.toThrow(
        'waited 300 ms for Postgres advisory lock 7461679, held by another Tally process that is migrating Postgres',
      )
    } finally {
      await holder`select pg_advisory_unlock(7461679)`
      holder.release()
      await pool.end()
    }
    // Released, the same run goes through.
    const again = postgres(engines().postgresUrl, { onnotice: () => {}, max: 1 })
    try {
      await expect(migratePostgres(again, `${SCHEMAS_DIR}postgres`, log, 300)).resolves.toEqual([])
    } finally {
      await again.end()
    }
  })

  it('refuse a database whose record gives one of their numbers to another file', async () => {
    const schema = `migrate_${randomUUID().replaceAll('-', '')}`
    await admin.unsafe(`create schema ${schema}`)
    const pool = postgres(engines().postgresUrl, {
      onnotice: () => {},
      max: 1,
      connection: { search_path: schema },
    })
    const dir = mkdtempSync(join(tmpdir(), 'tally-migrations-'))
    try {
      writeFileSync(join(dir, '0001_first.sql'), 'create table first (id int);')
      writeFileSync(join(dir, '0002_other_line.sql'), 'create table other_line (id int);')
      expect(await migratePostgres(pool, dir, log)).toEqual([1, 2])
      rmSync(join(dir, '0002_other_line.sql'))
      writeFileSync(join(dir, '0002_this_line.sql'), 'create table this_line (id int);')
      writeFileSync(join(dir, '0003_third.sql'), 'create table third (id int);')
      await expect(migratePostgres(pool, dir, log)).rejects.toThrow(
        "postgres migration 2 is recorded as 2_other_line, but this version of Tally's is 2_this_line",
      )
      const rows = await admin.unsafe(
        `select version, name from ${schema}.schema_migrations order by version`,
      )
      expect(rows.map((r) => `${r.version}_${r.name}`)).toEqual(['1_first', '2_other_line'])
    } finally {
      await pool.end()
      rmSync(dir, { recursive: true, force: true })
      await admin.unsafe(`drop schema ${schema} cascade`)
    }
  })
})

describe('clickhouse migrations', () => {
  it('apply idempotently and leave request_response_rmt in place', async () => {
    const ch = await openClickHouse(loadConfig(clickhouseEnv()), log)
    try {
      await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, log)
      expect(await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, log)).toEqual([])
      const rs = await ch.client.query({
        query:
          "SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'request_response_rmt'",
        format: 'JSONEachRow',
      })
      expect(await rs.json()).toEqual([{ engine: 'ReplacingMergeTree' }])
    } finally {
      await ch.close()
    }
  })

  it('splits DDL files on statement ends only', () => {
    expect(splitStatements("-- c\nCREATE A (x String DEFAULT ';');\nCREATE B;\n")).toEqual([
      "CREATE A (x String DEFAULT ';')",
      'CREATE B',
    ])
  })
})
