import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allowlist } from '../../services/api/sql/policy.ts'
import { callApi } from '../support/api.ts'
import { engines, type TestOrg, type TestTally } from '../support/harness.ts'
import { startWithTwoOrganizations } from './fixtures.ts'

/**
 * No organization and no analyst reads the host. The functions tried are not listed by hand: they
 * are every function and table function the running ClickHouse has whose name touches files, the
 * network, processes, settings or the catalogue, each called with arguments that would reach a
 * secret, through both doors (an organization's `POST /v1/sql/query`, the analyst door). No answer
 * may hold a secret of this Tally, a path of its data, or a host file; every function the allowlist
 * refuses must be refused, by name, before it runs.
 */
const TOUCHY =
  /file|url|s3|hdfs|azure|gcs|oss|cos|remote|cluster|mysql|postgres|mongo|redis|odbc|jdbc|sqlite|executable|host|server|setting|macro|port|filesystem|dict|join|merge|introspect|address|demangle|symbol|log|env|process|shell|cert|catboost|model|bayes|zookeeper|keeper|uuid|build|kernel|display|^ai|input|format|iceberg|delta|hudi|paimon|prometheus|timeseries|loop|view|fuzz|sleep|user|role|profile|quota|database|table|column|query|uptime|version|revision|tcp|http|header|client|connection|shard|replica|disk|path|^tid$|globalvariable|serial/i

/** Arguments that would reach something secret if the function got to run. */
const SCALAR_ARGUMENTS = [
  '',
  "'/proc/self/environ'",
  "'/etc/passwd'",
  "'path'",
  "'/proc/1/environ', 'RawBLOB'",
]
const TABLE_ARGUMENTS = [
  "'/proc/self/environ', 'RawBLOB'",
  "'/etc/passwd', 'LineAsString'",
  "'http://127.0.0.1:1/x', 'RawBLOB'",
  '',
]

const ADMIN_KEY = `tally-admin-${'h'.repeat(40)}`

let tally: TestTally
let a: TestOrg
let admin: ClickHouseClient
let secrets: string[]
let door: { url: string; username: string; password: string }

beforeAll(async () => {
  ;({ tally, a } = await startWithTwoOrganizations({ env: { TALLY_ADMIN_API_KEY: ADMIN_KEY } }))
  if (!tally.analyst) throw new Error('the test Tally has no analyst door')
  door = tally.analyst
  admin = createClient({ url: engines().clickhouseUrl, log: { level: ClickHouseLogLevel.OFF } })
  const password = (url: string | null) => (url ? decodeURIComponent(new URL(url).password) : '')
  secrets = [
    ADMIN_KEY,
    a.apiKey,
    password(engines().clickhouseUrl),
    password(engines().clickhouseSqlUrl),
    password(engines().clickhouseAnalystUrl),
    door.password,
    readFileSync(join(tally.config.TALLY_DATA_DIR, 'blobs', 'link-secret')).toString('hex'),
    password(engines().postgresUrl),
    tally.config.TALLY_DATA_DIR,
    // The shared test server's data directory (test/support/global-setup.ts).
    'tally-test-clickhouse-',
    'root:x:0:0',
    // A host name too short to tell from chance text is checked by refusing hostName() instead.
    hostname().length >= 6 ? hostname() : '',
  ].filter((secret) => secret.length >= 6)
})
afterAll(async () => {
  await admin?.close()
  await tally?.close()
})

interface Tried {
  via: string
  sql: string
  status: number
  text: string
}

async function throughSql(sql: string): Promise<Tried> {
  const res = await callApi(tally.app, 'POST', '/v1/sql/query', { as: a, body: { sql } })
  return { via: 'sql', sql, status: res.status, text: JSON.stringify(res) }
}

async function throughDoor(sql: string): Promise<Tried> {
  const res = await fetch(`${door.url}/`, {
    method: 'POST',
    body: sql,
    headers: { authorization: `Basic ${btoa(`${door.username}:${door.password}`)}` },
  })
  return { via: 'door', sql, status: res.status, text: await res.text() }
}

function expectNoSecret(tried: Tried): void {
  for (const secret of secrets)
    expect(tried.text, `${tried.via}: ${tried.sql} leaked ${secret.slice(0, 12)}…`).not.toContain(secret)
}

/** Names the server has that touch the outside, scalar and table functions apart. */
async function touchyNames(): Promise<{ scalar: string[]; table: string[] }> {
  const read = async (sql: string) =>
    ((await (await admin.query({ query: sql, format: 'JSONEachRow' })).json()) as { name: string }[]).map(
      (row) => row.name,
    )
  const scalar = (
    await read('SELECT name FROM system.functions WHERE NOT is_aggregate ORDER BY name')
  ).filter((name) => TOUCHY.test(name))
  const table = await read('SELECT name FROM system.table_functions ORDER BY name')
  return { scalar, table }
}

describe("host isolation, derived from the server's own functions", () => {
  it('every touchy scalar function, through both doors: refused by name when the allowlist refuses it, never a secret', async () => {
    const list = allowlist()
    const { scalar } = await touchyNames()
    expect(scalar.length).toBeGreaterThan(50)
    for (const name of scalar) {
      const refused = list.refuseFunction(name) !== undefined
      // A refused name is refused before anything runs, whatever its arguments: two shapes show it.
      for (const args of refused ? SCALAR_ARGUMENTS.slice(0, 2) : SCALAR_ARGUMENTS) {
        const sql = `SELECT toString(${name}(${args})) AS v`
        for (const tried of [await throughSql(sql), await throughDoor(sql)]) {
          expectNoSecret(tried)
          if (!refused) continue
          expect(tried.status, `${tried.via}: ${sql}`).toBe(tried.via === 'sql' ? 400 : 403)
          expect(tried.text, `${tried.via}: ${sql}`).toContain(`function ${name}() is not allowed`)
        }
      }
      if (refused) {
        // Some are called without parentheses (SELECT current_user): a refused name is refused bare too.
        for (const tried of [await throughSql(`SELECT ${name}`), await throughDoor(`SELECT ${name}`)]) {
          expectNoSecret(tried)
          expect(tried.status, `${tried.via}: SELECT ${name}`).toBe(tried.via === 'sql' ? 400 : 403)
        }
      }
    }
  }, 600_000)

  it('every table function, through both doors: only those that make rows of their arguments run, never a secret', async () => {
    const list = allowlist()
    const { table } = await touchyNames()
    expect(table.length).toBeGreaterThan(30)
    for (const name of table) {
      const refused = list.refuseTableFunction(name) !== undefined
      for (const args of TABLE_ARGUMENTS) {
        const sql = `SELECT * FROM ${name}(${args}) LIMIT 1`
        for (const tried of [await throughSql(sql), await throughDoor(sql)]) {
          expectNoSecret(tried)
          if (!refused) continue
          // Refused by the check, by name, or (arguments it cannot take) by the engine's parser.
          expect(tried.status, `${tried.via}: ${sql}`).toBeGreaterThanOrEqual(400)
          expect(tried.text, `${tried.via}: ${sql}`).toMatch(
            new RegExp(`table function ${name}\\(\\) is not allowed|Syntax error`),
          )
        }
      }
    }
  }, 600_000)

  it("files named as tables, the catalogue of other databases and the engine's own users: refused or empty", async () => {
    for (const sql of [
      'SELECT * FROM `/etc/passwd`',
      'SELECT * FROM default.`/proc/self/environ`',
      'SELECT * FROM system.users',
      'SELECT * FROM system.grants',
      'SELECT * FROM system.processes',
      'SELECT * FROM system.server_settings',
      'SELECT * FROM system.disks',
      'SELECT * FROM system.macros',
      'SELECT * FROM system.build_options',
      'SELECT * FROM system.query_log',
      'SELECT * FROM system.text_log',
      'SELECT name, data_path FROM system.databases',
      'SELECT database, name, data_paths, metadata_path FROM system.tables',
      // SQL inside strings, which the engine parses and runs (a red-team pass found these).
      "SELECT y FROM values('x UInt8, y String ALIAS hostName()', 1)",
      "SELECT y FROM values('x UInt8, y String ALIAS file(\\'/proc/self/mountinfo\\')', 1)",
      "SELECT arrayReduce('quantile(toFloat64(file(\\'/proc/self/cmdline\\')))', [1])",
      "SELECT initializeAggregation('quantile(toFloat64(hostName()))', 1)",
      "SELECT structureToCapnProtoSchema('a UInt8, x String DEFAULT toString(toUInt64(hostName()))', 'M')",
      'SHOW TABLES LIMIT toUInt64(hostName())',
      `SELECT * FROM ${tally.config.CLICKHOUSE_DATABASE}.request_response_rmt`,
    ]) {
      const viaSql = await throughSql(sql)
      expectNoSecret(viaSql)
      expect(viaSql.text, sql).not.toContain('tally-clickhouse')
      // The catalogue answers, filtered to the views, with the engine's own neutral paths.
      if (!/FROM system\.(databases|tables)$/.test(sql)) expect(viaSql.status, sql).toBe(400)
      const viaDoor = await throughDoor(sql)
      expectNoSecret(viaDoor)
      expect(viaDoor.text, sql).not.toContain('tally-clickhouse')
    }
  })
})
