// npm run bench:cluster — Tally scaled out on this machine: the intake path with 1 or 2 ingest
// processes writing to 1 or 2 ClickHouse shards, and session search at 10M requests on one node
// against two shards (Distributed tables, sharded by session). Both parts print the CPU or time
// they took beside a ceiling or the single node of the same run, and the load average.
//
// - Ingest (`-- --ingest` alone): bench:ingest's split load (bench/ingest-pipeline.ts: one API
//   process, the ingest process(es) as children, ~2 KB events, 8 connections, 100 events per POST)
//   for BENCH_SECONDS (default 25) per case, on a fresh ClickHouse (one node, or two shards) the
//   bench starts itself, after the raw client.insert ceiling on the same ClickHouse. Uses
//   KAFKA_BROKERS when set, otherwise starts infra/local's Kafka and stops it after.
// - Sessions (`-- --sessions` alone): bench:sessions' data (sessions-data.ts) generated once into
//   BENCH_CLUSTER_DIR (default .tally/bench-cluster) on one node and on two shards, and reused;
//   bench:sessions' main cases through the API of a Tally on each, alternately, p50/p95, the
//   cluster's answer asserted equal to the single node's. Then Tally's own statements on the
//   cluster with the distributed GROUP BY settings ClickHouse offers, and whether they still give
//   the same answer.
// DATABASE_URL is used when set (else embedded Postgres). Loopback only; bounded per case.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { ClickHouseSettings } from '@clickhouse/client'
import { createApiKeyRepo } from '../services/api/keys/repo.ts'
import { createSessionRepo } from '../services/api/sessions/repo.ts'
import { sessionQueryBody, toQuery } from '../services/api/sessions/routes.ts'
import type { ClickHouseClient } from '../services/shared/clickhouse/client.ts'
import { queryLimits } from '../services/shared/clickhouse/query-limits.ts'
import type { ClickHouseServer } from '../services/shared/clickhouse-server/handle.ts'
import { startClickHouseServer } from '../services/shared/clickhouse-server/server.ts'
import { freePort } from '../services/shared/net.ts'
import { type Child, quantile, runLoad, startChild, withKafka } from './ingest-pipeline.ts'
import { descendantPids, portOwner } from './processes.ts'
import { type Case, callApi, cases, ms, percentile } from './sessions-cases.ts'
import { BENCH_ORGS, BENCH_REQUESTS, ensureBenchSessions } from './sessions-data.ts'
import { startBenchRoles } from './tally.ts'

const ONLY_INGEST = process.argv.includes('--ingest')
const ONLY_SESSIONS = process.argv.includes('--sessions')
const DIR = resolve(
  process.env.BENCH_CLUSTER_DIR ?? new URL('../.tally/bench-cluster', import.meta.url).pathname,
)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 25)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const BATCH = Number(process.env.BENCH_BATCH ?? 100)
const CEILING_ROWS = 200_000
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const CASE_BUDGET_MS = 30_000
const SETTINGS_RUNS = 5
const SETTINGS_BUDGET_MS = 15_000
const CORES = availableParallelism()
// bench:sessions' cases the issue names: the plain page, a filter, search, count, the costly sort.
const SESSION_CASES = [
  'unfiltered 30-day page',
  'property + model filter',
  'search',
  'count',
  '(extra) sort by total_cost',
]
// ClickHouse's ways of running a GROUP BY on the shards rather than merging partial aggregates on
// the node asked. Tally sets neither: each is measured on Tally's own statements, answer checked.
const GROUP_BY_SETTINGS: [string, ClickHouseSettings][] = [
  ['as Tally runs them', {}],
  ['optimize_distributed_group_by_sharding_key=1', { optimize_distributed_group_by_sharding_key: 1 }],
  ['distributed_group_by_no_merge=2', { distributed_group_by_no_merge: '2' }],
]
const quiet = { info() {}, warn() {}, error() {} }
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')

interface Nodes {
  /** What Tally is told: CLICKHOUSE_URL and, for two shards, the cluster and its nodes. */
  env: Record<string, string>
  servers: ClickHouseServer[]
  /** Each server's processes (its sandbox and the engine below it when contained). */
  pids(i: number): number[]
  stop(): Promise<void>
}

/**
 * The embedded ClickHouse server (libchdb) under `dir`: one node, or two shards of one cluster
 * (remote_servers with a secret, shard macros, no replication), as test/faults/cluster.ts and
 * docs/operations.md start them. Ports are picked afresh each start; the data stays.
 */
async function startNodes(dir: string, shards: 1 | 2): Promise<Nodes> {
  const servers: ClickHouseServer[] = []
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()))
  }
  const pids = (i: number) => {
    const pid = (servers[i] as ClickHouseServer).pid
    return [pid, ...descendantPids(pid)]
  }
  const common = { secretsDir: join(dir, 'secrets'), log: quiet, deadlineMs: 180_000 }
  try {
    if (shards === 1) {
      const server = await startClickHouseServer({ ...common, dataDir: join(dir, 'node') })
      servers.push(server)
      return { env: { CLICKHOUSE_URL: server.url, CLICKHOUSE_SQL_URL: '' }, servers, pids, stop }
    }
    const ports = [await freePort(), await freePort(), await freePort(), await freePort()]
    const nodes = [
      { httpPort: ports[0] as number, tcpPort: ports[1] as number, shard: '01' },
      { httpPort: ports[2] as number, tcpPort: ports[3] as number, shard: '02' },
    ]
    const secret = crypto.randomUUID()
    for (const node of nodes)
      servers.push(
        await startClickHouseServer({
          ...common,
          dataDir: join(dir, `shard${node.shard}`),
          httpPort: node.httpPort,
          cluster: {
            tcpPort: node.tcpPort,
            name: 'tally_bench',
            secret,
            shards: nodes.map((n) => ({ host: '127.0.0.1', tcpPort: n.tcpPort })),
            macros: { shard: node.shard, replica: 'r1' },
          },
        }),
      )
    const [first, second] = servers as [ClickHouseServer, ClickHouseServer]
    return {
      env: {
        CLICKHOUSE_URL: first.url,
        // The bench asks no callers' SQL.
        CLICKHOUSE_SQL_URL: '',
        TALLY_CLICKHOUSE_CLUSTER: 'tally_bench',
        TALLY_CLICKHOUSE_CLUSTER_NODES: `${first.url},${second.url}`,
      },
      servers,
      pids,
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}

console.log(
  `bench:cluster — ${CORES} cores; load average at start ${load()} (1/5/15 min; other work on the machine shows here)`,
)
if (!ONLY_INGEST) await sessions()
if (!ONLY_SESSIONS) await withKafka(ingest)
console.log(`load average at end: ${load()}`)

interface IngestCase {
  ingest: 1 | 2
  shards: 1 | 2
}

interface IngestFigures extends IngestCase {
  /** Rows/s of the raw client.insert ceiling. */
  ceiling: number
  /** Events/s accepted at the API over the load, and written over the load and drain. */
  accepted: number
  written: number
  lost: number
  /** Acceptance → queryable, ms. */
  p50: number
  p99: number
  /** Cores busy on average over the load and drain: all processes, then Tally's and ClickHouse's. */
  cores: number
  tallyCores: number
  loadAverage: string
  /** Rows per ClickHouse insert of the consumer(s), on average. */
  rowsPerInsert: number
}

/** The four ingest cases on one Kafka, one after the other, then their table. */
async function ingest(baseEnv: NodeJS.ProcessEnv) {
  const figures: IngestFigures[] = []
  for (const c of [
    { ingest: 1, shards: 1 },
    { ingest: 2, shards: 1 },
    { ingest: 1, shards: 2 },
    { ingest: 2, shards: 2 },
  ] as IngestCase[])
    figures.push(await ingestCase(baseEnv, c))
  console.log(
    `\ningest, ${SECONDS} s of unpaced load per case (${CONNECTIONS} connections, ${BATCH} events per POST); ` +
      'per core = events/s written over the cores the processes kept busy',
  )
  console.log(
    'ingest  shards  ceiling rows/s  written ev/s  share  cores busy (Tally+CH)  per core (Tally+CH)  µs/event (Tally+CH)  rows/insert  p50/p99 queryable  load',
  )
  for (const f of figures) {
    const rate = f.written
    console.log(
      `${String(f.ingest).padStart(6)}  ${String(f.shards).padStart(6)}  ${String(Math.round(f.ceiling)).padStart(14)}  ${String(Math.round(rate)).padStart(12)}  ${`${((rate / f.ceiling) * 100).toFixed(0)}%`.padStart(5)}  ${`${f.cores.toFixed(2)} (${f.tallyCores.toFixed(2)})`.padStart(21)}  ${`${Math.round(rate / f.cores)} (${Math.round(rate / f.tallyCores)})`.padStart(19)}  ${`${Math.round((f.cores * 1e6) / rate)} (${Math.round((f.tallyCores * 1e6) / rate)})`.padStart(19)}  ${String(Math.round(f.rowsPerInsert)).padStart(11)}  ${`${Math.round(f.p50)} / ${Math.round(f.p99)} ms`.padStart(17)}  ${f.loadAverage}${f.lost ? `  LOST ${f.lost}` : ''}`,
    )
  }
}

/**
 * One ingest case: a fresh ClickHouse (one node or two shards) and data directory, the ingest
 * process(es) then the API as children, the ceiling, the load; everything stopped and removed after.
 */
async function ingestCase(baseEnv: NodeJS.ProcessEnv, c: IngestCase): Promise<IngestFigures> {
  const name = `${c.ingest} ingest process${c.ingest > 1 ? 'es' : ''}, ${c.shards} shard${c.shards > 1 ? 's' : ''}`
  console.log(`\n— ${name}`)
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-cluster-'))
  // Embedded Postgres runs as the `postgres` user under root: it must be able to enter the directory.
  chmodSync(dataDir, 0o755)
  const children: Child[] = []
  let nodes: Nodes | undefined
  try {
    nodes = await startNodes(join(dataDir, 'clickhouse'), c.shards)
    const env = {
      ...baseEnv,
      ...nodes.env,
      BENCH_RUN: `${Date.now().toString(36)}-${c.ingest}-${c.shards}`,
      BENCH_DATA_DIR: dataDir,
    }
    // The ingest processes first, one after the other (each migrates at start), so their
    // consumers are in the group before the load starts.
    for (let i = 0; i < c.ingest; i++) {
      const child = startChild('ingest', env, `ingest ${i + 1}`)
      children.push(child)
      await child.ask(null)
    }
    const front = startChild('api', env)
    children.push(front)
    const { url, apiKey, org } = await front.ask<{ url: string; apiKey: string; org: string }>(null)
    const back = children[0] as Child
    const { ceiling, json, avro } = await back.ask<{ ceiling: number; json: number; avro: number }>({
      cmd: 'ceiling',
      rows: CEILING_ROWS,
    })
    console.log(
      `raw insert ceiling: ${Math.round(ceiling)} rows/s, the higher of JSONCompactEachRow ${Math.round(json)} and Avro ${Math.round(avro)} (${CEILING_ROWS} rows, 5,000 per insert)`,
    )

    const cpuProcesses: [string, number][] = [['API', front.pid]]
    children.slice(0, c.ingest).forEach((child, i) => {
      cpuProcesses.push([c.ingest > 1 ? `ingest ${i + 1}` : 'ingest', child.pid])
    })
    nodes.servers.forEach((_, i) => {
      for (const pid of (nodes as Nodes).pids(i))
        cpuProcesses.push([c.shards > 1 ? `ClickHouse shard ${i + 1}` : 'ClickHouse', pid])
    })
    const broker = portOwner(baseEnv.KAFKA_BROKERS)
    if (broker) cpuProcesses.push(['Kafka broker', broker])
    const result = await runLoad({
      url,
      apiKey,
      org,
      ask: back.ask,
      seconds: SECONDS,
      connections: CONNECTIONS,
      batch: BATCH,
      cpuProcesses,
    })
    const written = result.written / result.allWrittenSeconds
    // Each consumer's inserts: with two, each gets half the partitions and writes smaller inserts.
    const inserts: { inserts: number; rows: number }[] = []
    for (const child of children.slice(0, c.ingest)) inserts.push(await child.ask({ cmd: 'inserts' }))
    const insertCount = inserts.reduce((sum, i) => sum + i.inserts, 0)
    const total = result.cpu.reduce((sum, [, s]) => sum + s, 0)
    const tally = result.cpu
      .filter(([n]) => n !== 'Kafka broker' && n !== 'load generator')
      .reduce((sum, [, s]) => sum + s, 0)
    const figures: IngestFigures = {
      ...c,
      ceiling,
      accepted: result.accepted / result.loadSeconds,
      written,
      lost: result.accepted - result.written,
      p50: quantile(result.latencies, 0.5),
      p99: quantile(result.latencies, 0.99),
      cores: total / result.allWrittenSeconds,
      tallyCores: tally / result.allWrittenSeconds,
      loadAverage: load(),
      rowsPerInsert: inserts.reduce((sum, i) => sum + i.rows, 0) / insertCount,
    }
    console.log(
      [
        `accepted at the API:   ${Math.round(figures.accepted)} events/s (${result.accepted} events; ${result.failed} failed POSTs)`,
        `written to ClickHouse: ${Math.round(written)} events/s (${result.written} of ${result.accepted}, all written ${result.allWrittenSeconds.toFixed(1)} s after start); ${((written / ceiling) * 100).toFixed(0)}% of the ceiling`,
        `CPU per event written (µs, over the load and drain): ${result.cpu
          .map(([n, s]) => `${n} ${Math.round((s * 1e6) / Math.max(result.written, 1))}`)
          .join(', ')}; total ${Math.round((total * 1e6) / Math.max(result.written, 1))}`,
        `ClickHouse inserts by the consumer${c.ingest > 1 ? 's' : ''}: ${insertCount}, ${Math.round(
          inserts.reduce((sum, i) => sum + i.rows, 0) / insertCount,
        )} rows each on average`,
        `cores busy: ${figures.cores.toFixed(2)} of ${CORES} (Tally and ClickHouse ${figures.tallyCores.toFixed(2)}); ` +
          `events/s per core busy: ${Math.round(written / figures.cores)} (Tally and ClickHouse alone ${Math.round(written / figures.tallyCores)})`,
        `acceptance → queryable: p50 ${Math.round(figures.p50)} ms, p99 ${Math.round(figures.p99)} ms (${result.latencies.length} samples)`,
        `load average: ${figures.loadAverage}`,
      ].join('\n'),
    )
    for (const child of [...children].reverse()) await child.stop()
    return figures
  } finally {
    for (const child of children) child.kill()
    await nodes?.stop()
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
  }
}

interface SessionTally {
  name: string
  url: string
  key: string
  client: ClickHouseClient
  limits: ReturnType<typeof queryLimits>
  stop(): Promise<void>
}

/**
 * A Tally API on `nodes`, bench:sessions' data there (generated on first use), and a key of the
 * organization the cases query.
 */
async function sessionTally(name: string, nodes: Nodes): Promise<SessionTally> {
  const dir = join(DIR, name)
  const { config, shutdown, started } = await startBenchRoles(
    `bench-cluster-${name}`,
    {
      ...nodes.env,
      TALLY_DATA_DIR: join(dir, 'tally'),
      // Merging ten million generated rows takes minutes with no byte on the wire.
      TALLY_CLICKHOUSE_REQUEST_TIMEOUT: '30m',
      // The generated month is history: ingest's rollup builder would spend the run building its
      // hours (bench:metrics does that on purpose).
      TALLY_METRICS_ROLLUP_INTERVAL: '24d',
    },
    // Without Kafka the API needs the consumers in its process (as `npm start`); nothing is sent.
    { api: true, ingest: true, dispatcher: true, exporter: false },
  )
  try {
    const sql = started.engines.postgres?.sql
    const clickhouse = started.engines.clickhouse
    if (!started.url || !sql || !clickhouse) throw new Error('tally did not start its API')
    await ensureBenchSessions(clickhouse.client, `BENCH_CLUSTER_DIR/${name}`, clickhouse.nodes)
    const org = BENCH_ORGS[0] as string
    await sql`insert into organizations (id, name) values (${org}, 'bench cluster') on conflict do nothing`
    const { secret } = await createApiKeyRepo(sql).create({ organizationId: org, name, role: 'admin' })
    return {
      name,
      url: started.url,
      key: secret,
      client: clickhouse.client,
      limits: queryLimits(config),
      stop: () => shutdown.run('bench finished'),
    }
  } catch (err) {
    await shutdown.run('bench failed')
    throw err
  }
}

/** Session search on one node against two shards, then the GROUP BY settings on the shards. */
async function sessions() {
  mkdirSync(DIR, { recursive: true })
  // Embedded Postgres runs as the postgres system user when we are root: it must reach the dir.
  chmodSync(DIR, 0o755)
  const started: { nodes: Nodes; tally?: SessionTally }[] = []
  try {
    for (const [name, shards] of [
      ['single', 1],
      ['cluster', 2],
    ] as const) {
      const dir = join(DIR, name)
      mkdirSync(dir, { recursive: true })
      chmodSync(dir, 0o755)
      const nodes = await startNodes(join(dir, 'clickhouse'), shards)
      const entry: { nodes: Nodes; tally?: SessionTally } = { nodes }
      started.push(entry)
      entry.tally = await sessionTally(name, nodes)
    }
    const [single, cluster] = started.map((s) => s.tally as SessionTally) as [SessionTally, SessionTally]
    console.log(
      `\nsession search, ${BENCH_REQUESTS.toLocaleString()} requests (one organization queried: half of them), ` +
        `one node against two shards, through the API; each round one call to each, alternately; load average ${load()}`,
    )
    console.log(
      'case                          single p50  single p95  cluster p50  cluster p95  cluster/single p50  same answer',
    )
    const chosen = SESSION_CASES.map((n) => cases.find((c) => c.name === n) as Case)
    const answers = new Map<string, unknown>()
    for (const c of chosen) {
      const times: [number[], number[]] = [[], []]
      let same = true
      const deadline = Date.now() + CASE_BUDGET_MS
      for (let i = 0; i < RUNS + 2 && Date.now() < deadline; i++) {
        // Which goes first alternates, so neither always finds the machine's caches warmer.
        const order = i % 2 ? [1, 0] : [0, 1]
        const got: unknown[] = []
        for (const k of order) {
          const t = performance.now()
          const target = k === 0 ? single : cluster
          got[k] = await callApi(target.url, target.key, c)
          // The first two rounds warm caches and are not counted.
          if (i >= 2) (times[k] as number[]).push(performance.now() - t)
        }
        if (JSON.stringify(got[0]) !== JSON.stringify(got[1])) same = false
        answers.set(c.name, got[0])
      }
      const [s, k] = times
      console.log(
        `${c.name.padEnd(28)} ${ms(percentile(s, 50)).padStart(11)} ${ms(percentile(s, 95)).padStart(11)} ${ms(percentile(k, 50)).padStart(12)} ${ms(percentile(k, 95)).padStart(12)} ${`${(percentile(k, 50) / percentile(s, 50)).toFixed(2)}×`.padStart(19)}  ${same ? 'yes' : 'NO'}  (n=${s.length})`,
      )
      if (!same) process.exitCode = 1
    }
    await groupBySettings(cluster, chosen, answers)
  } finally {
    for (const s of started.reverse()) {
      await s.tally?.stop()
      await s.nodes.stop()
    }
  }
}

/**
 * Tally's own statements for each case (the session repository, no HTTP) on the cluster, with each
 * of GROUP_BY_SETTINGS added; an answer that differs from the single node's is said, not hidden.
 */
async function groupBySettings(cluster: SessionTally, chosen: Case[], answers: Map<string, unknown>) {
  console.log(
    `\nthe same cases as Tally's repository calls on the cluster (no HTTP), with ClickHouse's distributed GROUP BY settings; p50 / p95, answer against the single node's; load average ${load()}`,
  )
  console.log(`case                          ${GROUP_BY_SETTINGS.map(([n]) => n.padEnd(46)).join('')}`)
  for (const c of chosen) {
    const query = toQuery(BENCH_ORGS[0] as string, sessionQueryBody.parse(c.body))
    const cells: string[] = []
    for (const [, settings] of GROUP_BY_SETTINGS) {
      const repo = createSessionRepo(withSettings(cluster.client, settings), cluster.limits)
      const times: number[] = []
      let answer: unknown
      let failed: string | undefined
      const deadline = Date.now() + SETTINGS_BUDGET_MS
      for (let i = 0; i < SETTINGS_RUNS + 1 && Date.now() < deadline; i++) {
        const t = performance.now()
        try {
          answer =
            c.path === '/v1/session/count'
              ? { count: await repo.count(query) }
              : (await repo.page(query)).map((r) => r.session_id)
        } catch (err) {
          failed = (err as Error).message.split('\n')[0]?.slice(0, 60)
          break
        }
        if (i >= 1) times.push(performance.now() - t)
      }
      const same = JSON.stringify(answer) === JSON.stringify(answers.get(c.name))
      cells.push(
        (failed
          ? `failed: ${failed}`
          : `${ms(percentile(times, 50)).trim()} / ${ms(percentile(times, 95)).trim()}  ${same ? 'same' : 'DIFFERENT'}`
        ).padEnd(46),
      )
    }
    console.log(`${c.name.padEnd(28)}  ${cells.join('')}`)
  }
}

/** `client` with `settings` added to every query it sends (its own `query` is fixed: timed.ts). */
function withSettings(client: ClickHouseClient, settings: ClickHouseSettings): ClickHouseClient {
  const wrapped = Object.create(client) as ClickHouseClient
  Object.defineProperty(wrapped, 'query', {
    value: (params: Parameters<ClickHouseClient['query']>[0]) =>
      client.query({ ...params, clickhouse_settings: { ...params.clickhouse_settings, ...settings } }),
  })
  return wrapped
}
