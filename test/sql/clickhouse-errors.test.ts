import { createServer } from 'node:net'
import { createClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CLICKHOUSE_FAILURES,
  type ClickHouseFailure,
  DEFAULT_FAILURE,
  failureOf,
} from '../../services/shared/clickhouse/errors.ts'
import { withEnginePriority } from '../../services/shared/clickhouse/priority.ts'
import { queryLimits, readRows } from '../../services/shared/clickhouse/query-limits.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { AppError } from '../../services/shared/errors.ts'
import { callApi } from '../support/api.ts'
import { engines, startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { tcpProxy } from '../support/tcp-proxy.ts'

let tally: TestTally
let org: TestOrg
let proxy: Awaited<ReturnType<typeof tcpProxy>>
/** Every error name the server can raise. */
let names: string[]

beforeAll(async () => {
  // Callers' SQL reaches the restricted user through a proxy this file can close.
  const sqlUrl = new URL(engines().clickhouseSqlUrl as string)
  proxy = await tcpProxy({ host: sqlUrl.hostname, port: Number(sqlUrl.port) })
  sqlUrl.port = String(proxy.port)
  tally = await startTestTally({ env: { CLICKHOUSE_SQL_URL: sqlUrl.toString() } })
  org = await tally.newOrg()
  const rs = await tally.clickhouse.query({
    query: 'SELECT DISTINCT name FROM system.errors ORDER BY name',
    format: 'JSONEachRow',
    // system.errors lists the errors raised so far, unless asked for every one.
    clickhouse_settings: { system_events_show_zero_values: 1 },
  })
  names = (await rs.json<{ name: string }>()).map((r) => r.name)
})
afterAll(async () => {
  await tally?.close()
  await proxy?.close()
})

describe('the table of ClickHouse errors', () => {
  it('lists only names the server has', () => {
    expect(names.length).toBeGreaterThan(500)
    expect([...CLICKHOUSE_FAILURES.keys()].filter((name) => !names.includes(name))).toEqual([])
  })

  it(`classifies every name the server has, by the table or as "${DEFAULT_FAILURE}"`, () => {
    // Names that speak of the server's own resources are never left to the default: a code a
    // later ClickHouse adds with such a name fails here until it is put in the table.
    const serverSide =
      /(^|_)(FILES?|SOCKET|PASSWORD|KEEPER|ZOOKEEPER|REPLICAS?|REPLICATION|SIGNAL|THREAD|MEMORY|DISK|CONFIG)(_|$)/
    const defaulted = names.filter((name) => !CLICKHOUSE_FAILURES.has(name))
    expect(defaulted.filter((name) => serverSide.test(name) && !REVIEWED_AS_USER.has(name))).toEqual([])
    for (const name of names) expect(['user', 'limit', 'unavailable', 'internal']).toContain(failureOf(name))
  })

  it.each<[string, ClickHouseFailure]>([
    ['SYNTAX_ERROR', 'user'],
    ['UNKNOWN_IDENTIFIER', 'user'],
    ['ILLEGAL_DIVISION', 'user'],
    ['CANNOT_LOAD_CATBOOST_MODEL', 'user'],
    ['TIMEOUT_EXCEEDED', 'limit'],
    ['TOO_DEEP_AST', 'limit'],
    ['TOO_MANY_SIMULTANEOUS_QUERIES', 'unavailable'],
    ['CANNOT_ALLOCATE_MEMORY', 'unavailable'],
    ['LOGICAL_ERROR', 'internal'],
    ['CANNOT_OPEN_FILE', 'internal'],
    ['WRONG_PASSWORD', 'internal'],
  ])('%s is %s', (name, kind) => {
    expect(failureOf(name)).toBe(kind)
  })
})

/**
 * Names with a server-sounding word that are the query's own doing: a file or disk named in the
 * query, input that ends too soon, replication commands Tally never sends.
 */
const REVIEWED_AS_USER = new Set([
  'INCORRECT_FILE_NAME',
  'UNKNOWN_DISK',
  'INCORRECT_DISK_INDEX',
  'BAD_FILE_TYPE',
  'UNKNOWN_FILE_SIZE',
  'CANNOT_DETECT_FORMAT',
  'INTO_OUTFILE_NOT_ALLOWED',
  'FILECACHE_ACCESS_DENIED',
  'CACHE_CANNOT_WRITE_TO_CACHE_DISK',
  'FILECACHE_CANNOT_WRITE_THROUGH_CACHE_WITH_CONCURRENT_READS',
  'NO_REPLICA_HAS_PART',
  'NO_REPLICA_NAME_GIVEN',
  'REPLICA_IS_ALREADY_ACTIVE',
  'REPLICA_ALREADY_EXISTS',
  'NO_SUCH_REPLICA',
  'REPLICA_IS_NOT_IN_QUORUM',
  'REPLICA_STATUS_CHANGED',
  'MISMATCH_REPLICAS_DATA_SOURCES',
  'CANNOT_RESTORE_TO_NONENCRYPTED_DISK',
  'EXPECTED_END_OF_FILE',
  'UNEXPECTED_END_OF_FILE',
])

describe('ClickHouse errors as callers read them', () => {
  it('a query deeper than the server allows is a 422 naming the limit, not a 400', async () => {
    const deep = `SELECT ${'('.repeat(1100)}1${')'.repeat(1100)}`
    const res = await callApi(tally.app, 'POST', '/v1/sql/query', { as: org, body: { sql: deep } })
    expect(res.status).toBe(422)
    expect(res.error).toMatch(/^query exceeded a limit of the server: Maximum parse depth \(1000\) exceeded/)
  })

  it('a query whose server cannot be reached is a 503 to retry, not a 500', async () => {
    await proxy.close()
    const res = await callApi(tally.app, 'POST', '/v1/sql/query', { as: org, body: { sql: 'SELECT 1' } })
    expect(res).toEqual({
      status: 503,
      data: null,
      error: 'ClickHouse is unavailable for now; retry the request',
    })
  })

  it("Tally's own queries (readRows) answer the same: 503 unreachable, 400 for a bad value", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as { port: number }
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const limits = queryLimits(loadConfig({}))
    const gone = createClient({ url: `http://127.0.0.1:${port}` })
    const unreachable = await readRows(gone, limits, { query: 'SELECT 1', query_params: {} }).catch((e) => e)
    expect(unreachable).toBeInstanceOf(AppError)
    expect(unreachable).toMatchObject({ status: 503, code: 'clickhouse_unavailable' })
    await gone.close()

    const bad = await readRows(tally.clickhouse, limits, {
      query: 'SELECT toUInt8({v:String})',
      query_params: { v: 'not a number' },
    }).catch((e) => e)
    expect(bad).toMatchObject({ status: 400, code: 'bad_request' })
    expect(bad.message).toMatch(/Cannot parse/)
  })

  it("Tally's own queries (readRows) run at the priority the query gate gave them", async () => {
    const limits = queryLimits(loadConfig({}))
    // ClickHouse 26 names the setting os_threads_nice_value_query (os_thread_priority its alias).
    const statement = { query: "SELECT getSetting('os_threads_nice_value_query') AS p", query_params: {} }
    expect(await withEnginePriority(9, () => readRows(tally.clickhouse, limits, statement))).toEqual([
      { p: 9 },
    ])
    expect(await readRows(tally.clickhouse, limits, statement)).toEqual([{ p: 0 }])
  })
})
