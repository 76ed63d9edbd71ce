// npm run bench:metrics — POST /v1/metrics/query and keyset paging of POST /v1/request/query over
// the requests bench:sessions generates (10M by default, 2 organizations; BENCH_METRICS_REQUESTS
// for fewer), each case beside its ceiling: the same SQL run directly on the same ClickHouse by the
// same process. The data is bench:sessions' own (sessions-data.ts, ensureBenchSessions), generated
// once into .tally/bench-sessions (shared with bench:sessions; BENCH_SESSIONS_DIR overrides) and
// reused. Loopback only; bounded per case.
import { chmodSync, mkdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { toQuery } from '../services/api/analytics/routes.ts'
import { metricsQueryBody } from '../services/api/analytics/schema.ts'
import { freshHoursStatement, metricsStatement } from '../services/api/analytics/sql.ts'
import { encodeCursor } from '../services/api/http/cursor.ts'
import { createApiKeyRepo } from '../services/api/keys/repo.ts'
import { READ_SETTINGS } from '../services/shared/clickhouse/request-table.ts'
import { loadConfig } from '../services/shared/config.ts'
import { createLogger } from '../services/shared/logger.ts'
import { createShutdown } from '../services/shared/shutdown.ts'
import { startTally } from '../services/standalone/compose.ts'
import {
  BENCH_ORGS,
  BENCH_REQUESTS,
  BENCH_WINDOW,
  ensureBenchSessions,
  ensureRollups,
} from './sessions-data.ts'

const REQUESTS = Number(process.env.BENCH_METRICS_REQUESTS ?? BENCH_REQUESTS)
const ORG = BENCH_ORGS[0] as string
const WINDOW = BENCH_WINDOW
const RUNS = 15
const CASE_BUDGET_MS = 45_000
const PAGE = 100

const dataDir = resolve(
  process.env.BENCH_SESSIONS_DIR ?? new URL('../.tally/bench-sessions', import.meta.url).pathname,
)
mkdirSync(dataDir, { recursive: true })
chmodSync(dataDir, 0o755)
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  TALLY_DATA_DIR: dataDir,
  TALLY_LOG_LEVEL: 'warn',
  TALLY_RATE_LIMIT_PER_MINUTE: '100000000',
  TALLY_CLICKHOUSE_REQUEST_TIMEOUT: '30m',
  // The bench builds the rollups itself (ensureRollups, timed); ingest's builder would do it twice.
  TALLY_METRICS_ROLLUP_INTERVAL: '24d',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
})
const log = createLogger(config, 'bench-metrics')
const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
const started = await startTally(config, log, shutdown, {
  api: true,
  ingest: true,
  dispatcher: true,
  exporter: true,
})
const sql = started.engines.postgres?.sql
const clickhouse = started.engines.clickhouse?.client
if (!started.url || !sql || !clickhouse) throw new Error('tally did not start its API')

const rows = await ensureBenchSessions(clickhouse, dataDir, undefined, REQUESTS)
await ensureRollups(clickhouse)
await sql`insert into organizations (id, name) values (${ORG}, 'bench sessions') on conflict do nothing`
const { secret } = await createApiKeyRepo(sql).create({ organizationId: ORG, name: 'bench', role: 'admin' })

console.log(
  `bench:metrics — ${rows.toLocaleString()} requests over 30 days, 2 organizations (the first queried: ${(await orgRows()).toLocaleString()}); ${started.engines.clickhouse?.describe}`,
)
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (2 cores; figures from a busy machine say little)`,
)
console.log('api = HTTP call; ceiling = the same SQL run directly (no HTTP, no validation, no shaping)')
console.log(
  'case                                         api p50   api p95  ceil p50  ceil p95  target    same answer',
)

interface Case {
  name: string
  target: number
  api: () => Promise<unknown>
  ceiling: () => Promise<unknown>
}

const metricsCase = (name: string, target: number, body: Record<string, unknown>): Case => {
  const parsed = metricsQueryBody.parse(body)
  const query = toQuery(ORG, parsed).query
  const freshStatement = freshHoursStatement(query)
  return {
    name,
    target,
    api: async () => {
      const data = (await post('/v1/metrics/query', body)).data as {
        totals: { count: number }
        series: unknown[]
      }
      return { count: data.totals.count, series: parsed.dimensions.length ? data.series.length : 0 }
    },
    // The API's two statements (the rollup's fresh hours, then the metrics), run directly.
    ceiling: async () => {
      const fresh = freshStatement
        ? ((await select(freshStatement.query, freshStatement.query_params))[0]?.hours as number[])
        : undefined
      const statement = metricsStatement(query, fresh)
      const found = await select(statement.query, statement.query_params)
      const totals = found.find((r) => Number(r.all_buckets) === 1 && Number(r.all_series) === 1)
      const series = new Set(
        found
          .filter((r) => Number(r.all_buckets) === 1 && Number(r.all_series) === 0)
          .map((r) => JSON.stringify([r.d0, r.d1])),
      )
      return { count: Number(totals?.n), series: series.size }
    },
  }
}

const measures = ['count', 'cost_sum', 'latency_p95']
const byHour = { timeFilter: WINDOW, measures, granularity: 'hour', limit: 10 }

// Page 1,000 of the default sort (fewer when the organization has under 200,000 rows: half of its
// pages): the cursor an earlier walk would hold is made from the row before it.
const DEEP_PAGE = Math.max(2, Math.min(1_000, Math.floor((await orgRows()) / PAGE / 2)))
const offset = (DEEP_PAGE - 1) * PAGE
// The API's cursor page (services/api/requests/repo.ts): the hour before the cursor, else the
// day, else 30 days, else everything before it, the first that fills the page.
const WINDOWS = [3_600_000, 86_400_000, 30 * 86_400_000, undefined]
const pageSql = (after: boolean, skip: number, windowMs?: number) => `
SELECT request_id, toUnixTimestamp64Milli(request_created_at) AS ms, latency, cost FROM request_response_rmt FINAL
WHERE organization_id = {org:UUID} AND (true)
  ${after ? "AND (request_created_at, request_id) < (fromUnixTimestamp64Milli({after_value:Int64}, 'UTC'), {after_id:UUID}) AND request_created_at <= fromUnixTimestamp64Milli({after_value:Int64}, 'UTC')" : ''}
  ${after && windowMs ? `AND request_created_at >= fromUnixTimestamp64Milli({after_value:Int64} - ${windowMs}, 'UTC')` : ''}
ORDER BY request_created_at DESC, request_id DESC
LIMIT ${PAGE} OFFSET ${skip}`
async function cursorPage(): Promise<Record<string, unknown>[]> {
  for (const windowMs of WINDOWS) {
    const found = await select(pageSql(true, 0, windowMs), { org: ORG, ...afterKey })
    if (found.length >= PAGE || windowMs === undefined) return found
  }
  return []
}
const [boundary] = await select(
  `SELECT request_id, ms FROM (${pageSql(false, offset - 1).replace(`LIMIT ${PAGE}`, 'LIMIT 1')})`,
  { org: ORG },
)
const afterKey = { after_value: Number(boundary?.ms), after_id: String(boundary?.request_id) }
const cursor = encodeCursor(ORG, 'created_at:desc', [afterKey.after_value, afterKey.after_id])
// Bench rows' ids are not RFC 9562 UUIDs, which the request record refuses: rows are told apart
// by time, latency and cost instead.
const FIELDS = ['created_at', 'latency_ms', 'cost_usd']
const ids = (data: unknown) =>
  (data as { created_at: string; latency_ms: number; cost_usd: number }[]).map(
    (r) => `${Date.parse(r.created_at)}|${r.latency_ms}|${r.cost_usd}`,
  )
const keys = (rows: Record<string, unknown>[]) =>
  rows.slice(0, PAGE).map((r) => `${Number(r.ms)}|${r.latency}|${r.cost}`)

const cases: Case[] = [
  metricsCase('30 days × hour × model', 300, { ...byHour, dimensions: ['model'] }),
  metricsCase('30 days × hour × user_id (top 10 + other)', 1_000, { ...byHour, dimensions: ['user_id'] }),
  metricsCase('(extra) 30 days × day, no dimension', 300, {
    timeFilter: WINDOW,
    measures,
    granularity: 'day',
  }),
  {
    name: `cursor page ${DEEP_PAGE.toLocaleString()} (size ${PAGE})`,
    target: 100,
    api: async () => ids((await post('/v1/request/query', { limit: PAGE, cursor, fields: FIELDS })).data),
    ceiling: async () => keys(await cursorPage()),
  },
  {
    name: `(beside it) offset page ${DEEP_PAGE.toLocaleString()}`,
    target: Number.POSITIVE_INFINITY,
    api: async () => ids((await post('/v1/request/query', { limit: PAGE, offset, fields: FIELDS })).data),
    ceiling: async () => keys(await select(pageSql(false, offset), { org: ORG })),
  },
]

const answers: unknown[] = []
for (const c of cases) {
  const api: number[] = []
  const ceiling: number[] = []
  let apiAnswer: unknown
  let ceilingAnswer: unknown
  const deadline = Date.now() + CASE_BUDGET_MS
  for (let i = 0; i < RUNS + 2 && Date.now() < deadline; i += 1) {
    const t0 = performance.now()
    apiAnswer = await c.api()
    const t1 = performance.now()
    ceilingAnswer = await c.ceiling()
    const t2 = performance.now()
    // The first two rounds warm caches and are not counted.
    if (i >= 2) {
      api.push(t1 - t0)
      ceiling.push(t2 - t1)
    }
  }
  answers.push(apiAnswer)
  const same = JSON.stringify(apiAnswer) === JSON.stringify(ceilingAnswer)
  const p95 = percentile(api, 95)
  const verdict = Number.isFinite(c.target) ? `≤ ${c.target}: ${p95 <= c.target ? 'met' : 'NOT met'}` : ''
  console.log(
    `${c.name.padEnd(42)} ${ms(percentile(api, 50))} ${ms(p95)} ${ms(percentile(ceiling, 50))} ${ms(percentile(ceiling, 95))}  ${verdict.padEnd(14)} ${same ? 'yes' : 'NO'}  (n=${api.length})`,
  )
}
for (const [name, body] of [
  ['hour × model', { ...byHour, dimensions: ['model'] }],
  ['hour × user_id', { ...byHour, dimensions: ['user_id'] }],
] as const) {
  const statement = metricsStatement(toQuery(ORG, metricsQueryBody.parse(body)).query)
  for (const final of [true, false]) {
    const t = performance.now()
    await select(final ? statement.query : statement.query.replaceAll(' FINAL', ''), statement.query_params)
    console.log(
      `(scale) ${name}, the raw rows' SQL (no rollup)${final ? '' : ' without FINAL'}, one run: ${(performance.now() - t).toFixed(0)} ms`,
    )
  }
}
console.log(
  `cursor page ${DEEP_PAGE} is offset page ${DEEP_PAGE}: ${JSON.stringify(answers[3]) === JSON.stringify(answers[4]) ? 'yes' : 'NO'}`,
)
console.log(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
await shutdown.run('bench finished')

async function post(path: string, body: unknown): Promise<{ data: unknown }> {
  const res = await fetch(`${started.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as { data: unknown; error: string | null }
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${json.error}`)
  return json
}

async function select(query: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const rs = await clickhouse?.query({
    query,
    query_params: params,
    format: 'JSONEachRow',
    clickhouse_settings: READ_SETTINGS,
  })
  return (await rs?.json<Record<string, unknown>>()) ?? []
}

async function orgRows(): Promise<number> {
  const [row] = await select(
    'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID}',
    { org: ORG },
  )
  return Number(row?.n)
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number
}

function ms(value: number): string {
  return `${value.toFixed(0)} ms`.padStart(9)
}
