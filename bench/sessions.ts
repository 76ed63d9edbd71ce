// npm run bench:sessions — POST /v1/session/query and /count over 10M requests / 1M sessions /
// 2 organizations, each case beside a hand-written SQL of the same answer run by the same process
// on the same ClickHouse (the ceiling). The data is generated once into .tally/bench-sessions
// (override with BENCH_SESSIONS_DIR) and reused. Loopback only; bounded per case.
import { chmodSync, mkdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { createApiKeyRepo } from '../services/api/keys/repo.ts'
import { createSessionRepo } from '../services/api/sessions/repo.ts'
import { sessionQueryBody, toQuery } from '../services/api/sessions/routes.ts'
import type { ClickHouseClient } from '../services/shared/clickhouse/client.ts'
import { queryLimits } from '../services/shared/clickhouse/query-limits.ts'
import { loadConfig } from '../services/shared/config.ts'
import { createLogger } from '../services/shared/logger.ts'
import { createShutdown } from '../services/shared/shutdown.ts'
import { startTally } from '../services/standalone/compose.ts'
import { callApi, cases, ms, percentile } from './sessions-cases.ts'
import {
  BENCH_ORGS,
  BENCH_REQUESTS,
  BENCH_WINDOW,
  ensureBenchSessions,
  ensureRollups,
} from './sessions-data.ts'
import { CEILINGS } from './sessions-sql.ts'

const REQUESTS = BENCH_REQUESTS
const ORGS = BENCH_ORGS
const WINDOW = BENCH_WINDOW
const RUNS = 15
const CASE_BUDGET_MS = 25_000

const dataDir = resolve(
  process.env.BENCH_SESSIONS_DIR ?? new URL('../.tally/bench-sessions', import.meta.url).pathname,
)
mkdirSync(dataDir, { recursive: true })
// Embedded Postgres runs as the postgres system user when we are root: it must reach the dir.
chmodSync(dataDir, 0o755)
const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  TALLY_DATA_DIR: dataDir,
  TALLY_LOG_LEVEL: 'warn',
  TALLY_RATE_LIMIT_PER_MINUTE: '100000000',
  // Merging ten million generated rows takes minutes with no byte on the wire.
  TALLY_CLICKHOUSE_REQUEST_TIMEOUT: '30m',
  // The bench builds the rollups itself (ensureRollups, timed); ingest's builder would do it twice.
  TALLY_METRICS_ROLLUP_INTERVAL: '24d',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
})
const log = createLogger(config, 'bench-sessions')
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

await ensureBenchSessions(clickhouse, dataDir)
await ensureRollups(clickhouse)
await sql`insert into organizations (id, name) values (${ORGS[0] as string}, 'bench sessions') on conflict do nothing`
const { secret } = await createApiKeyRepo(sql).create({
  organizationId: ORGS[0] as string,
  name: 'bench',
  role: 'admin',
})

console.log(
  `bench:sessions — ${REQUESTS.toLocaleString()} requests, 2 organizations; ${started.engines.clickhouse?.describe}`,
)
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (2 cores; figures from a busy machine say little)`,
)
console.log(
  'api = HTTP call; own sql = the same repo calls without HTTP (the overhead is api over this); ceiling = hand-written SQL',
)
console.log(
  `ceiling at limit = the same hand-written SQL at the API's thread limit (max_threads ${config.TALLY_QUERY_MAX_THREADS}, as every caller query runs); ratio = api p50 over it`,
)
console.log(
  'case                          api p50   api p95   own p50   own p95   overhead  ceil p50  ceil p95  at limit p50/p95  ratio  same answer',
)
const repo = createSessionRepo(clickhouse, queryLimits(config))
const results: { name: string; api: number[]; ceiling: number[]; atLimit: number[] }[] = []
// BENCH_CASES: only the cases whose name contains it (e.g. `total_cost`), for a quick look.
const only = process.env.BENCH_CASES
for (const c of cases.filter((c) => !only || c.name.includes(only))) {
  const params: Record<string, unknown> = {
    org: ORGS[0],
    start: WINDOW.startTimeUnixMs,
    end: WINDOW.endTimeUnixMs,
    offset: 0,
    limit: 50,
    ...c.params,
  }
  params.rows = 2 * ((params.offset as number) + (params.limit as number)) + 100
  const api: number[] = []
  const own: number[] = []
  const ceiling: number[] = []
  const atLimit: number[] = []
  const query = toQuery(ORGS[0] as string, sessionQueryBody.parse(c.body))
  let apiAnswer: unknown
  let sqlAnswer: unknown
  const deadline = Date.now() + CASE_BUDGET_MS
  for (let i = 0; i < RUNS + 2 && Date.now() < deadline; i += 1) {
    const t0 = performance.now()
    apiAnswer = await callApi(started.url, secret, c)
    const t1 = performance.now()
    sqlAnswer = await runCeiling(clickhouse, c.ceiling, params)
    const t2 = performance.now()
    await (c.path === '/v1/session/count' ? repo.count(query) : repo.page(query))
    const t3 = performance.now()
    await runCeiling(clickhouse, c.ceiling, params, { max_threads: config.TALLY_QUERY_MAX_THREADS })
    const t4 = performance.now()
    // The first two rounds warm caches and are not counted.
    if (i >= 2) {
      api.push(t1 - t0)
      ceiling.push(t2 - t1)
      own.push(t3 - t2)
      atLimit.push(t4 - t3)
    }
  }
  const same = JSON.stringify(apiAnswer) === JSON.stringify(sqlAnswer)
  results.push({ name: c.name, api, ceiling, atLimit })
  const ratio = percentile(api, 50) / percentile(atLimit, 50)
  const overhead = (percentile(api, 50) / percentile(own, 50) - 1) * 100
  console.log(
    `${c.name.padEnd(28)} ${ms(percentile(api, 50))} ${ms(percentile(api, 95))} ${ms(percentile(own, 50))} ${ms(percentile(own, 95))} ${`${overhead >= 0 ? '+' : ''}${overhead.toFixed(0)}%`.padStart(9)} ${ms(percentile(ceiling, 50))} ${ms(percentile(ceiling, 95))} ${ms(percentile(atLimit, 50))} ${ms(percentile(atLimit, 95))} ${ratio.toFixed(2).padStart(6)}×  ${same ? 'yes' : 'NO'}  (n=${api.length})`,
  )
}

if (only) {
  console.log(`targets: not judged (BENCH_CASES=${only} ran some cases only)`)
  await shutdown.run('bench finished')
  process.exit(0)
}
const first = results[0] as { api: number[] }
const worstP95 = Math.max(...results.map((r) => percentile(r.api, 95)))
const worstRatio = Math.max(...results.map((r) => percentile(r.api, 50) / percentile(r.atLimit, 50)))
console.log(
  `targets: unfiltered p50 ${percentile(first.api, 50).toFixed(0)} ms (≤ 250: ${percentile(first.api, 50) <= 250 ? 'met' : 'NOT met'}); worst case p95 ${worstP95.toFixed(0)} ms (≤ 1000: ${worstP95 <= 1000 ? 'met' : 'NOT met'}); ` +
    `worst api p50 over its hand-written SQL at the same thread limit ${worstRatio.toFixed(2)}× (≤ 1.2: ${worstRatio <= 1.2 ? 'met' : 'NOT met'})`,
)
const t = performance.now()
await runCeiling(clickhouse, 'naive', {
  org: ORGS[0],
  start: WINDOW.startTimeUnixMs,
  end: WINDOW.endTimeUnixMs,
})
console.log(`naive single GROUP BY with FINAL (one run, for scale): ${(performance.now() - t).toFixed(0)} ms`)
const raw = performance.now()
await runCeiling(clickhouse, 'costPageRaw', {
  org: ORGS[0],
  start: WINDOW.startTimeUnixMs,
  end: WINDOW.endTimeUnixMs,
  offset: 0,
  limit: 50,
})
console.log(
  `sort by total_cost from the requests, no rollup, no FINAL (one run, for scale): ${(performance.now() - raw).toFixed(0)} ms`,
)
console.log(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
await shutdown.run('bench finished')

async function runCeiling(
  client: ClickHouseClient,
  name: keyof typeof CEILINGS,
  params: Record<string, unknown>,
  settings: { max_threads?: number } = {},
) {
  const rs = await client.query({
    query: CEILINGS[name],
    query_params: params,
    format: 'JSONEachRow',
    clickhouse_settings: settings,
  })
  const rows = await rs.json<Record<string, unknown>>()
  return name === 'count' ? { count: Number(rows[0]?.count) } : rows.map((r) => r.session_id)
}
