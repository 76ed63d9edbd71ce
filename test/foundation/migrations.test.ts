import { randomUUID } from 'node:crypto'
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
      expect(runs.flat().sort()).toEqual(files.map((f) => f.version))
      expect(await migratePostgres(pools[0] as postgres.Sql, `${SCHEMAS_DIR}postgres`, log)).toEqual([])
      const rows = await admin.unsafe(`select version from ${schema}.schema_migrations order by version`)
      expect(rows.map((r) => r.version)).toEqual(files.map((f) => f.version))
    } finally {
      await Promise.all(pools.map((p) => p.end()))
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
