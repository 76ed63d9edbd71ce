// npm run bench:scores — the scores issue's target: "2,000 scores/s sustained while session search
// p95 stays within 10% of without". Session searches (the default page, a model + property filter,
// a sort by total_cost, a score filter) run one after another for BENCH_SECONDS (default 45) alone
// (phase A, the ceiling measured in the same run), then for as long again while a load generator
// posts scores open-loop at BENCH_SCORE_RATE (default 2,000 scores/s; phase B), then alone again
// once every score has landed (phase A', for the machine's drift). Prints the searches' p50/p95 per
// phase, the p95 ratio B/A against 1.10, the scores accepted per second (2xx only; the rest by
// status), the score POSTs' p95, and checks that the scores stored in ClickHouse (`scores` FINAL)
// are exactly the ones accepted.
//
// Tally runs as production composes it: with KAFKA_BROKERS set, the API in one process and ingest
// (with the dispatcher and exporter when DATABASE_URL is set) in another, on fresh topics; without
// it, every role in one process on the in-process transport. The output says which. REDIS_URL,
// when set, holds the rate limits (lifted to UNLIMITED, still counted: a score is an event). The
// data: BENCH_REQUESTS (default 1,000,000) requests in sessions of 10 over 30 days, one
// organization, generated inside ClickHouse by bench:sessions' generator into a fresh data
// directory (seconds), then merged. The searches run in this process and the score load in a child
// of its own (`--load`: undici, BENCH_CONNECTIONS keep-alive connections, default 256), so neither
// shares an event loop with the other or with Tally. Also printed: each process's CPU per phase, the
// API's event-loop delay, the searches' CPU priority as Tally computes it. BENCH_SEARCH_PAUSE_MS
// pauses between searches; TALLY_QUERY_PRIORITY=off and BENCH_CHILD_NODE_OPTIONS (e.g. `--cpu-prof
// --cpu-prof-dir=/tmp/prof`) pass to Tally. Loopback only; bounded in time (under 3 minutes on 2
// cores by default); exits 0 whether or not the targets are met.
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Pool } from 'undici'
import { createFairShare } from '../services/shared/clickhouse/priority.ts'
import { askableChild, cpuSeconds, descendantPids, portOwner } from './processes.ts'
import { generateSessions, sessionId } from './sessions-data.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 45)
/** Offered scores per second (a map of two scores counts two). */
const SCORE_RATE = Number(process.env.BENCH_SCORE_RATE ?? 2_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1_000_000)
/** The load generator's connections to the API (undici, keep-alive, no pipelining). */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 256)
/**
 * BENCH_SCORE_BATCH=N: every POST is POST /v1/scores/batch of N scores (an evaluator's way);
 * 0 (default): the per-score mix below (three single scores to one Helicone map of two).
 */
const BATCH = Number(process.env.BENCH_SCORE_BATCH ?? 0)
/** Searches in flight at once (each loop runs the cases one after another). */
const SEARCH_CONCURRENCY = Number(process.env.BENCH_SEARCH_CONCURRENCY ?? 1)
/**
 * Pause between one search's answer and the next search of a loop (0: back to back). Tally gives
 * an organization that keeps the engine busy a lower CPU priority (TALLY_QUERY_PRIORITY=fair): back
 * to back, the searching organization is such a one.
 */
const SEARCH_PAUSE_MS = Number(process.env.BENCH_SEARCH_PAUSE_MS ?? 0)
/** Phase A' (the baseline again once the scores have landed); BENCH_BASELINE_AGAIN=0 skips it. */
const BASELINE_AGAIN = process.env.BENCH_BASELINE_AGAIN !== '0'
/** Scores stored before phase A, so the score filter has sessions to find. */
const SEED_SCORES = 2_000
/** POSTs due and waiting for a connection beyond which the generator skips its slots (counted). */
const MAX_QUEUED = 4_000
const TARGET_RATE = 2_000
const TARGET_RATIO = 1.1
const LAND_TIMEOUT_MS = 60_000
const KAFKA = Boolean(process.env.KAFKA_BROKERS)

const START = Date.UTC(2026, 9, 2)
const DAY = 86_400_000
const WINDOW = { startTimeUnixMs: START, endTimeUnixMs: START + 30 * DAY }
const PER_SESSION = 10
const CHUNK = 1_000_000
/** The sessions scored as sessions ("a few"). */
const SCORED_SESSIONS = Array.from({ length: 20 }, (_, i) => sessionId(i * 37))
// What the scores API takes as a request id (zod's uuid: RFC 9562 version and variant). The
// generated ids are hashes: about one in eight is one.
const RFC_UUID = '^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

type Role = 'api' | 'workers' | 'all'

type Command =
  | { cmd: 'generate'; requests: number }
  | { cmd: 'targets'; n: number }
  | { cmd: 'count' }
  | { cmd: 'loop' }
  | { cmd: 'stop' }

interface SearchCase {
  name: string
  body: Record<string, unknown>
}
const base = { timeFilter: WINDOW, timezoneDifference: 0, filter: 'all' }
const SCORE_FILTER = { sessions_request_response_rmt: { avg_score: { helpfulness: { gte: 0.7 } } } }
const CASES: SearchCase[] = [
  { name: 'default page (30 days)', body: base },
  {
    name: 'model + property filter',
    body: {
      ...base,
      filter: {
        left: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
        operator: 'and',
        right: { request_response_rmt: { properties: { env: { equals: 'prod' } } } },
      },
    },
  },
  { name: 'sort by total_cost', body: { ...base, sort: { total_cost: 'desc' } } },
  { name: 'score filter (avg helpfulness ≥ 0.7)', body: { ...base, filter: SCORE_FILTER } },
]

// ---------------------------------------------------------------------------------------------
// Tally, in child processes: answers the parent's questions about itself over IPC.

/** Tally's environment, the same in every one of its processes (topics named by the run). */
function tallyEnv(): Record<string, string> {
  const run = process.env.BENCH_RUN as string
  return {
    TALLY_DATA_DIR: process.env.BENCH_DATA_DIR as string,
    // The generated month is history: ingest's rollup builder would spend the phases building its
    // 721 hours (bench:metrics builds them on purpose). Live traffic builds one hour an hour.
    TALLY_METRICS_ROLLUP_INTERVAL: '24d',
    // `off` measures without per-organization engine priorities (clickhouse/priority.ts).
    ...(process.env.TALLY_QUERY_PRIORITY ? { TALLY_QUERY_PRIORITY: process.env.TALLY_QUERY_PRIORITY } : {}),
    // Each score counts against the organization's limits: shared through Redis when it is set.
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...(KAFKA
      ? {
          KAFKA_BROKERS: process.env.KAFKA_BROKERS as string,
          TALLY_REQUEST_TOPIC: `tally.bench.scores.${run}`,
          TALLY_DLQ_TOPIC: `tally.bench.scores.${run}.dlq`,
          TALLY_CONSUMER_GROUP_PREFIX: `bench-scores-${run}.`,
        }
      : {}),
  }
}

/** The roles of the process that is not the API's, with Kafka. */
const workerRoles = () => ({
  api: false,
  ingest: true,
  // Without DATABASE_URL each process would start its own embedded Postgres: ingest alone then.
  dispatcher: Boolean(process.env.DATABASE_URL),
  exporter: Boolean(process.env.DATABASE_URL),
})

async function serve(role: Role) {
  const { startBenchRoles, startBenchTally } = await import('./tally.ts')
  const reply = (m: unknown) => (process.send as (m: unknown) => void)(m)
  if (role === 'workers') {
    const { shutdown } = await startBenchRoles('bench scores workers', tallyEnv(), workerRoles())
    process.on('message', async ({ id, cmd }: { id: number; cmd: string }) => {
      if (cmd !== 'stop') return
      await shutdown.run('bench finished')
      reply({ id })
      process.exit(0)
    })
    return reply({ id: 0 })
  }
  const tally = await startBenchTally(
    'bench scores',
    tallyEnv(),
    role === 'api'
      ? { api: true, ingest: false, dispatcher: false, exporter: false }
      : { api: true, ingest: true, dispatcher: true, exporter: true },
  )
  const ch = tally.engines.clickhouse?.client
  if (!ch) throw new Error('tally did not start ClickHouse')
  const org = tally.organizationId
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  const rows = async <T>(query: string, params: Record<string, unknown> = {}) => {
    const rs = await ch.query({ query, query_params: { org, ...params }, format: 'JSONEachRow' })
    return rs.json<T>()
  }
  process.on('message', async ({ id, ...m }: Command & { id: number }) => {
    const send = (answer: object) => reply({ id, ...answer })
    if (m.cmd === 'generate') {
      const t = performance.now()
      for (let first = 0; first < m.requests; first += CHUNK)
        await generateSessions(ch, {
          organizations: [org],
          requests: Math.min(CHUNK, m.requests - first),
          perSession: PER_SESSION,
          startMs: START,
          days: 30,
          first,
        })
      const generated = performance.now()
      // The steady state bench:sessions measures: background merges have caught up.
      for (const table of ['request_response_rmt', 'session_hours'])
        await ch.command({ query: `OPTIMIZE TABLE ${table} FINAL` })
      send({ generateMs: generated - t, mergeMs: performance.now() - generated })
    } else if (m.cmd === 'targets') {
      // Spread over the month's sessions, in a fixed order.
      const found = await rows<{ id: string }>(
        `SELECT toString(request_id) AS id FROM request_response_rmt
         WHERE organization_id = {org:UUID} AND match(toString(request_id), {re:String})
         ORDER BY cityHash64(request_id) LIMIT {n:UInt32}`,
        { re: RFC_UUID, n: m.n },
      )
      send({ ids: found.map((r) => r.id) })
    } else if (m.cmd === 'count') {
      const [row] = await rows<{ n: string }>(
        'SELECT count() AS n FROM scores FINAL WHERE organization_id = {org:UUID}',
      )
      send({ count: Number(row?.n) })
    } else if (m.cmd === 'loop') {
      send({ p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 })
      loop.reset()
    } else if (m.cmd === 'stop') {
      await tally.shutdown.run('bench finished')
      send({})
      process.exit(0)
    }
  })
  reply({ id: 0, url: tally.url, key: tally.key, org, describe: tally.engines.clickhouse?.describe })
}

/** A Tally child process of this bench (this file with `--serve`). */
function startChild(role: Role, env: NodeJS.ProcessEnv) {
  return askableChild<Command>(new URL(import.meta.url).pathname, ['--serve', role], env, role)
}

// ---------------------------------------------------------------------------------------------
// The score load generator, in a child process of its own.

interface LoadSetup {
  url: string
  key: string
  /** Request ids the single scores grade (repeats allowed: they carry their own ids). */
  singles: string[]
  /** Request ids Helicone's maps grade, each once per round of names (derived ids stay distinct). */
  maps: string[]
}
type LoadCommand = { cmd: 'seed'; n: number } | { cmd: 'run'; seconds: number; rate: number }

interface LoadResult {
  /** Scores offered (slots due within the run), accepted (2xx) and skipped (too many in flight). */
  offeredScores: number
  acceptedScores: number
  skippedScores: number
  skippedPosts: number
  posts: number
  acceptedPosts: number
  /** Non-2xx answers and failures, by status or error code. */
  failed: Record<string, number>
  firstErrors: string[]
  /** Per POST, ms from its slot (open loop: waiting for a connection counts) to its answer. */
  latencies: number[]
  /** Per POST, ms from being sent on a connection to its answer (the API's own time). */
  service: number[]
  byShape: Record<string, { posts: number; accepted: number }>
  /** From the first slot to the last answer. */
  seconds: number
}

async function load() {
  let setup: LoadSetup | undefined
  let pool: Pool | undefined
  const headers = () => ({ authorization: `Bearer ${setup?.key}`, 'content-type': 'application/json' })

  /** POST number k of the mix: 3 of 4 single scores (POST /v1/scores), 1 of 4 Helicone's map of 2. */
  const post = (k: number): { path: string; body: string; scores: number; shape: string } => {
    const s = setup as LoadSetup
    if (BATCH > 0) {
      const scores = Array.from({ length: BATCH }, (_, i) => ({
        ...single(k * BATCH + i, s),
        id: randomUUID(),
      }))
      return {
        path: '/v1/scores/batch',
        body: JSON.stringify({ scores }),
        scores: BATCH,
        shape: `POST /v1/scores/batch (${BATCH} scores)`,
      }
    }
    if (k % 4 === 3) {
      const h = (k - 3) / 4
      const round = Math.floor(h / s.maps.length)
      const suffix = round === 0 ? '' : `-r${round}`
      return {
        path: `/v1/request/${s.maps[h % s.maps.length]}/score`,
        body: JSON.stringify({
          scores: { [`helpfulness${suffix}`]: (k % 101) / 100, [`correct${suffix}`]: k % 3 !== 0 },
        }),
        scores: 2,
        shape: 'POST /v1/request/{id}/score (map of 2)',
      }
    }
    return {
      path: '/v1/scores',
      body: JSON.stringify({ ...single(k, s), id: randomUUID() }),
      scores: 1,
      shape: k % 40 === 0 ? 'POST /v1/scores (session)' : 'POST /v1/scores (request)',
    }
  }

  /** Score number k of the single-score mix: a session's 1 in 40, a category 1 in 8, else a number. */
  const single = (k: number, s: LoadSetup) =>
    k % 40 === 0
      ? {
          target: { session_id: SCORED_SESSIONS[(k / 40) % SCORED_SESSIONS.length] },
          name: 'resolved',
          value: k % 80 === 0,
          source: 'annotation',
          comment: 'bench',
        }
      : k % 8 === 1
        ? {
            target: { request_id: s.singles[k % s.singles.length] },
            name: 'tone',
            value: ['polite', 'curt', 'neutral'][k % 3],
            source: 'eval',
          }
        : {
            target: { request_id: s.singles[k % s.singles.length] },
            name: 'helpfulness',
            value: (k % 97) / 96,
            source: k % 2 ? 'api' : 'eval',
          }

  const fresh = (): LoadResult => ({
    offeredScores: 0,
    acceptedScores: 0,
    skippedScores: 0,
    skippedPosts: 0,
    posts: 0,
    acceptedPosts: 0,
    failed: {},
    firstErrors: [],
    latencies: [],
    service: [],
    byShape: {},
    seconds: 0,
  })

  async function send(r: LoadResult, path: string, body: string, scores: number, shape: string, at: number) {
    r.posts++
    r.byShape[shape] ??= { posts: 0, accepted: 0 }
    const tally = r.byShape[shape]
    tally.posts++
    const sent = performance.now()
    try {
      const res = await (pool as Pool).request({ path, method: 'POST', headers: headers(), body })
      const text = await res.body.text()
      r.latencies.push(performance.now() - at)
      r.service.push(performance.now() - sent)
      if (res.statusCode >= 200 && res.statusCode < 300) {
        r.acceptedPosts++
        r.acceptedScores += scores
        tally.accepted++
      } else {
        r.failed[res.statusCode] = (r.failed[res.statusCode] ?? 0) + 1
        if (r.firstErrors.length < 5) r.firstErrors.push(`${res.statusCode} ${path}: ${text.slice(0, 200)}`)
      }
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err as Error).name
      r.failed[code] = (r.failed[code] ?? 0) + 1
      if (r.firstErrors.length < 5) r.firstErrors.push(`${code} ${path}: ${(err as Error).message}`)
    }
  }

  /** Seeds `n` helpfulness scores, 16 at a time (closed loop: it is not measured). */
  async function seed(n: number): Promise<LoadResult> {
    const r = fresh()
    const s = setup as LoadSetup
    let i = 0
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (i < n) {
          const k = i++
          const body = JSON.stringify({
            id: randomUUID(),
            target: { request_id: s.singles[k % s.singles.length] },
            name: 'helpfulness',
            // Half the seeded requests at 0.75 or more: the score filter finds their sessions.
            value: k % 2 ? 0.75 + (k % 25) / 100 : (k % 50) / 100,
          })
          r.offeredScores++
          await send(r, '/v1/scores', body, 1, 'seed', performance.now())
        }
      }),
    )
    return r
  }

  /**
   * Open loop: POST k is due at start + k / postRate whatever came of the others. Due POSTs wait
   * in a queue for one of the CONNECTIONS connections (each sends one at a time); past
   * MAX_QUEUED waiting, a slot is skipped and counted.
   */
  async function run(seconds: number, rate: number): Promise<LoadResult> {
    const r = fresh()
    // Four POSTs of the mix carry five scores (three singles, one map of two); a batch BATCH.
    const postRate = BATCH > 0 ? rate / BATCH : (rate * 4) / 5
    const interval = 1000 / postRate
    const slots = Math.ceil(seconds * postRate)
    const queue: number[] = []
    let head = 0
    let scheduled = false
    const idle: (() => void)[] = []
    const connection = async () => {
      for (;;) {
        if (head < queue.length) {
          const k = queue[head++] as number
          const p = post(k)
          await send(r, p.path, p.body, p.scores, p.shape, t0 + k * interval)
        } else if (scheduled) return
        else await new Promise<void>((wake) => idle.push(wake))
      }
    }
    const t0 = performance.now()
    const connections = Array.from({ length: CONNECTIONS }, connection)
    let k = 0
    while (k < slots) {
      const due = Math.min(Math.floor((performance.now() - t0) / interval) + 1, slots)
      for (; k < due; k++) {
        const scores = BATCH > 0 ? BATCH : k % 4 === 3 ? 2 : 1
        r.offeredScores += scores
        if (queue.length - head >= MAX_QUEUED) {
          r.skippedScores += scores
          r.skippedPosts++
          continue
        }
        queue.push(k)
        idle.pop()?.()
      }
      if (head > 100_000) {
        queue.splice(0, head)
        head = 0
      }
      if (k < slots) await new Promise((resolve) => setTimeout(resolve, 1))
    }
    scheduled = true
    for (const wake of idle.splice(0)) wake()
    await Promise.all(connections)
    // Until the last answer: a generator that fell behind drains after the load's seconds.
    r.seconds = (performance.now() - t0) / 1000
    return r
  }

  process.on('message', async (m: LoadSetup | LoadCommand) => {
    if ('url' in m) {
      setup = m
      pool = new Pool(m.url, { connections: CONNECTIONS, pipelining: 1, headersTimeout: 30_000 })
      process.send?.('ready')
    } else if (m.cmd === 'seed') process.send?.(await seed(m.n))
    else if (m.cmd === 'run') {
      const r = await run(m.seconds, m.rate)
      await pool?.close()
      process.send?.(r)
    }
  })
}

// ---------------------------------------------------------------------------------------------
// The parent: starts everything, runs the searches, prints the figures.

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number
}

interface Phase {
  name: string
  /** Latencies (ms) per case, and of every search. */
  byCase: number[][]
  all: number[]
  failed: Record<string, number>
  seconds: number
  /** Cores each process kept busy on average. */
  cpu: [string, number][]
  loop: { p99: number; max: number }
  /** The nice value Tally's fair share gives each search (computed here from their times). */
  priority: number[]
}

async function measure() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-scores-'))
  // Embedded Postgres runs as the `postgres` user under root: it must be able to enter the directory.
  chmodSync(dataDir, 0o755)
  const env = { ...process.env, BENCH_RUN: Date.now().toString(36), BENCH_DATA_DIR: dataDir }
  const front = startChild(KAFKA ? 'api' : 'all', env)
  const children = [front]
  let generator: ReturnType<typeof fork> | undefined
  const t0 = performance.now()
  try {
    // The API's process first: it starts the ClickHouse server, which the workers' attach to.
    const ready = await front.ask<{ url: string; key: string; org: string; describe: string }>(null)
    if (KAFKA) {
      const back = startChild('workers', env)
      children.push(back)
      await back.ask(null)
    }
    const roles = workerRoles()
    const transport = KAFKA
      ? `Kafka (KAFKA_BROKERS=${process.env.KAFKA_BROKERS}, fresh topic tally.bench.scores.${env.BENCH_RUN}); ` +
        `API in one process, ${['ingest', ...(roles.dispatcher ? ['dispatcher', 'exporter'] : [])].join(' + ')} in another`
      : 'in-process (KAFKA_BROKERS unset): every role in one process, a score is answered once written to ClickHouse'
    console.log(`bench:scores — transport: ${transport}`)
    console.log(
      `ClickHouse: ${ready.describe}; Postgres: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}`,
    )
    console.log(
      `load average at start: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} on ${availableParallelism()} cores (figures from a busy machine say little)`,
    )
    console.log(`Tally started in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

    const { generateMs, mergeMs } = await front.ask<{ generateMs: number; mergeMs: number }>({
      cmd: 'generate',
      requests: REQUESTS,
    })
    console.log(
      `data: ${REQUESTS.toLocaleString()} requests in ${(REQUESTS / PER_SESSION).toLocaleString()} sessions over 30 days, one organization; ` +
        `generated in ${(generateMs / 1000).toFixed(1)} s, merged in ${(mergeMs / 1000).toFixed(1)} s`,
    )

    // Targets: Helicone's maps need a request id each per round of names; singles may repeat.
    const mapsNeeded = Math.ceil((SCORE_RATE * SECONDS) / 5) + 1
    const { ids } = await front.ask<{ ids: string[] }>({ cmd: 'targets', n: mapsNeeded + 20_000 })
    if (ids.length < 1_000) throw new Error(`only ${ids.length} request ids the scores API takes`)
    const singles = ids.slice(0, Math.min(20_000, Math.floor(ids.length / 4)))
    const maps = ids.slice(singles.length)

    generator = fork(new URL(import.meta.url).pathname, ['--load'], { env })
    const gen = generator
    const fromGenerator = <T>(message?: object) =>
      new Promise<T>((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`the load generator exited (${code})`))
        gen.once('exit', onExit)
        gen.once('message', (m) => {
          gen.off('exit', onExit)
          resolve(m as T)
        })
        if (message) gen.send(message)
      })
    await fromGenerator({ url: ready.url, key: ready.key, singles, maps } satisfies LoadSetup)
    const seeded = await fromGenerator<LoadResult>({ cmd: 'seed', n: SEED_SCORES } satisfies LoadCommand)
    if (seeded.acceptedScores !== SEED_SCORES)
      console.log(
        `seeding: ${seeded.acceptedScores} of ${SEED_SCORES} accepted; ${JSON.stringify(seeded.failed)} ${seeded.firstErrors.join(' | ')}`,
      )
    const seedLanded = await landed(front, seeded.acceptedScores)
    console.log(
      `seeded ${seeded.acceptedScores} helpfulness scores (stored: ${seedLanded.count}, ${(seedLanded.ms / 1000).toFixed(1)} s)`,
    )

    const searches = new Pool(ready.url, { connections: SEARCH_CONCURRENCY, pipelining: 1 })
    const search = async (c: SearchCase): Promise<number> => {
      const res = await searches.request({
        path: '/v1/session/query',
        method: 'POST',
        headers: { authorization: `Bearer ${ready.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(c.body),
      })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`${c.name}: ${res.statusCode} ${text.slice(0, 300)}`)
      return (JSON.parse(text) as { data: unknown[] }).data.length
    }
    const countScored = async () => {
      const res = await searches.request({
        path: '/v1/session/count',
        method: 'POST',
        headers: { authorization: `Bearer ${ready.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...base, filter: SCORE_FILTER }),
      })
      const json = (await res.body.json()) as { data: { count: number } | null; error: string | null }
      return res.statusCode === 200 ? json.data?.count : `${res.statusCode} ${json.error}`
    }
    // Warm-up: two rounds of every case, not counted; each must answer 200.
    for (let i = 0; i < 2; i++) for (const c of CASES) await search(c)
    console.log(`sessions the score filter finds before phase B: ${await countScored()}`)

    const broker = portOwner(process.env.KAFKA_BROKERS)
    // The machine's Redis may serve others too: its CPU is not all the bench's.
    const redis = portOwner(process.env.REDIS_URL)
    const processes = (): [string, number][] => [
      [KAFKA ? 'API' : 'Tally', front.pid],
      ...(KAFKA
        ? ([[roles.dispatcher ? 'ingest+dispatcher+exporter' : 'ingest', children[1]?.pid as number]] as [
            string,
            number,
          ][])
        : []),
      ...children.flatMap((c) =>
        descendantPids(c.pid).map((pid): [string, number] => ['ClickHouse server', pid]),
      ),
      ...(broker ? ([['Kafka broker', broker]] as [string, number][]) : []),
      ...(redis ? ([['Redis (shared)', redis]] as [string, number][]) : []),
      ['load generator', gen.pid as number],
      ['searches (this)', process.pid],
    ]

    // Tally gives each query of an organization a CPU priority from the engine time its queries took
    // lately (services/shared/clickhouse/priority.ts); the same computation over the searches' times
    // says about what the searches got.
    const fairShare = createFairShare()
    /** Runs the cases round-robin from SEARCH_CONCURRENCY loops for `seconds`. */
    async function phase(name: string, seconds: number): Promise<Phase> {
      await front.ask({ cmd: 'loop' }) // resets the API's event-loop histogram
      const procs = processes()
      const before = procs.map(([, pid]) => cpuSeconds(pid))
      const p: Phase = {
        name,
        byCase: CASES.map(() => []),
        all: [],
        failed: {},
        seconds,
        cpu: [],
        loop: { p99: 0, max: 0 },
        priority: [],
      }
      const started = performance.now()
      const end = started + seconds * 1000
      await Promise.all(
        Array.from({ length: SEARCH_CONCURRENCY }, async (_, w) => {
          for (let i = w; performance.now() < end; i++) {
            if (i > w && SEARCH_PAUSE_MS > 0) await new Promise((r) => setTimeout(r, SEARCH_PAUSE_MS))
            if (performance.now() >= end) break
            const c = i % CASES.length
            const t = performance.now()
            const share = fairShare.start(ready.org)
            p.priority.push(share.priority)
            try {
              await search(CASES[c] as SearchCase)
              const ms = performance.now() - t
              p.byCase[c]?.push(ms)
              p.all.push(ms)
            } catch (err) {
              const key = (err as Error).message.slice(0, 80)
              p.failed[key] = (p.failed[key] ?? 0) + 1
            } finally {
              share.end()
            }
          }
        }),
      )
      const wall = (performance.now() - started) / 1000
      const byName = new Map<string, number>()
      procs.forEach(([n, pid], i) => {
        byName.set(n, (byName.get(n) ?? 0) + (cpuSeconds(pid) - (before[i] as number)) / wall)
      })
      p.cpu = [...byName]
      p.loop = await front.ask<{ p99: number; max: number }>({ cmd: 'loop' })
      return p
    }

    const a = await phase('A  searches alone', SECONDS)
    console.log(`phase A done: ${a.all.length} searches`)
    const scoring = fromGenerator<LoadResult>({
      cmd: 'run',
      seconds: SECONDS,
      rate: SCORE_RATE,
    } satisfies LoadCommand)
    const b = await phase(`B  with scores at ${SCORE_RATE}/s`, SECONDS)
    const scores = await scoring
    const loadStopped = performance.now()
    console.log(`phase B done: ${b.all.length} searches, ${scores.acceptedScores} scores accepted`)
    const expected = seeded.acceptedScores + scores.acceptedScores
    const stored = await landed(front, expected)
    const landedAfter = (performance.now() - loadStopped) / 1000
    const scoredAfter = await countScored()
    const again = BASELINE_AGAIN ? await phase("A' searches alone again", SECONDS) : undefined
    await searches.close()

    // ---- figures
    const ms = (v: number) => (Number.isNaN(v) ? '—' : v.toFixed(0)).padStart(8)
    const phases = [a, b, ...(again ? [again] : [])]
    console.log('')
    console.log(
      `searches: POST /v1/session/query, ${SEARCH_CONCURRENCY} loop(s) round-robin over ${CASES.length} cases, ${SEARCH_PAUSE_MS ? `${SEARCH_PAUSE_MS} ms between searches` : 'back to back'}, ${SECONDS} s per phase; ms`,
    )
    console.log(
      `${'case'.padEnd(38)}${phases.map((p) => `${`${p.name.split(' ')[0]} p50`.padStart(8)}${`${p.name.split(' ')[0]} p95`.padStart(8)}`).join('')}  p95 B/A`,
    )
    const rowsOf = (label: string, pick: (p: Phase) => number[]) => {
      const ratio = percentile(pick(b), 95) / percentile(pick(a), 95)
      console.log(
        `${label.padEnd(38)}${phases.map((p) => `${ms(percentile(pick(p), 50))}${ms(percentile(pick(p), 95))}`).join('')} ${ratio.toFixed(2).padStart(8)}×  (n=${phases.map((p) => pick(p).length).join('/')})`,
      )
    }
    CASES.forEach((c, i) => {
      rowsOf(c.name, (p) => p.byCase[i] as number[])
    })
    rowsOf('all searches (the mix)', (p) => p.all)
    for (const p of phases)
      if (Object.keys(p.failed).length)
        console.log(`failed searches in ${p.name}: ${JSON.stringify(p.failed)}`)
    console.log(`phases: ${phases.map((p) => p.name).join('; ')}`)
    if (process.env.TALLY_QUERY_PRIORITY !== 'off')
      console.log(
        `CPU priority of the searches in ClickHouse (os_thread_priority, 0 best … 19), as Tally's fair share computes it from their times: ${phases
          .map(
            (p) =>
              `${p.name.split(' ')[0]} ${(p.priority.reduce((x, y) => x + y, 0) / p.priority.length).toFixed(1)}`,
          )
          .join(', ')} on average`,
      )

    const rate = scores.acceptedScores / scores.seconds
    const lat = scores.latencies
    const pct = (q: number) => percentile(lat, q).toFixed(0)
    console.log('')
    console.log(
      BATCH > 0
        ? `score load (phase B): open loop, ${SCORE_RATE} scores/s offered = ${(SCORE_RATE / BATCH).toFixed(1)} POSTs/s ` +
            `of POST /v1/scores/batch with ${BATCH} scores (explicit ids), ${CONNECTIONS} keep-alive connections (undici)`
        : `score load (phase B): open loop, ${SCORE_RATE} scores/s offered = ${((SCORE_RATE * 4) / 5).toFixed(0)} POSTs/s ` +
            `(3 of 4 POST /v1/scores with one score and an explicit id, 1 of 4 POST /v1/request/{id}/score with a map of 2), ${CONNECTIONS} keep-alive connections (undici)`,
    )
    console.log(
      `  offered ${scores.offeredScores} scores in ${scores.posts + scores.skippedPosts} POSTs; ` +
        `accepted (2xx) ${scores.acceptedScores} scores in ${scores.seconds.toFixed(1)} s (to the last answer) = ${rate.toFixed(0)} scores/s (${scores.acceptedPosts} POSTs); ` +
        `non-2xx by status ${JSON.stringify(scores.failed)}; skipped (over ${MAX_QUEUED} waiting for a connection) ${scores.skippedScores}`,
    )
    for (const [shape, s] of Object.entries(scores.byShape))
      console.log(`  ${shape}: ${s.accepted} of ${s.posts} accepted`)
    for (const e of scores.firstErrors) console.log(`  e.g. ${e}`)
    console.log(
      `  score POST latency from its slot: p50 ${pct(50)} ms, p95 ${pct(95)} ms, p99 ${pct(99)} ms, max ${pct(100)} ms; ` +
        `of which the API's own (sent → answered): p50 ${percentile(scores.service, 50).toFixed(0)} ms, p95 ${percentile(scores.service, 95).toFixed(0)} ms`,
    )
    console.log(
      `  stored: ${stored.count} rows in scores FINAL for the organization; expected ${expected} (${seeded.acceptedScores} seeded + ${scores.acceptedScores} accepted in B): ` +
        `${stored.count === expected ? 'equal' : `NOT equal (${stored.count - expected >= 0 ? '+' : ''}${stored.count - expected})`}, ` +
        `${stored.count >= expected ? `all landed ${landedAfter.toFixed(1)} s after the load stopped` : `not all within ${LAND_TIMEOUT_MS / 1000} s`}`,
    )
    console.log(`  sessions the score filter finds after phase B: ${scoredAfter}`)
    console.log('')
    console.log('CPU, cores kept busy on average per phase (/proc user + system):')
    for (const p of phases)
      console.log(
        `  ${p.name.padEnd(28)} ${p.cpu.map(([n, c]) => `${n} ${c.toFixed(2)}`).join(', ')}; total ${p.cpu
          .reduce((s, [, c]) => s + c, 0)
          .toFixed(
            2,
          )} of ${availableParallelism()}; API event loop delay p99 ${p.loop.p99.toFixed(0)} ms (max ${p.loop.max.toFixed(0)})`,
      )
    console.log(
      `load average at end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; whole run ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    )
    const ratio = percentile(b.all, 95) / percentile(a.all, 95)
    const failures = Object.values(scores.failed).reduce((s, n) => s + n, 0) + scores.skippedScores
    console.log(
      `targets: ${TARGET_RATE} scores/s sustained: ${rate.toFixed(0)}/s accepted, ${failures} not (${rate >= TARGET_RATE * 0.99 && failures === 0 ? 'met' : 'NOT met'}); ` +
        `search p95 with scores within 10% of without: ${percentile(b.all, 95).toFixed(0)} / ${percentile(a.all, 95).toFixed(0)} ms = ${ratio.toFixed(2)}× (≤ ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'})` +
        `${again ? `; A' against A: ${(percentile(again.all, 95) / percentile(a.all, 95)).toFixed(2)}× (the drift between the two baselines)` : ''}; ` +
        `every accepted score stored once: ${stored.count === expected ? 'yes' : 'NO'}`,
    )
    for (const c of [...children].reverse()) await c.stop()
  } finally {
    generator?.kill()
    for (const c of children) c.kill()
    // A killed child's ClickHouse server stops once it sees its owner gone: retry while it does.
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
  }
}

/** Polls the stored scores until `expected` are there or LAND_TIMEOUT_MS has passed. */
async function landed(front: ReturnType<typeof startChild>, expected: number) {
  const t = performance.now()
  let count = 0
  while (performance.now() - t < LAND_TIMEOUT_MS) {
    count = (await front.ask<{ count: number }>({ cmd: 'count' })).count
    if (count >= expected) break
    await new Promise((r) => setTimeout(r, 200))
  }
  return { count, ms: performance.now() - t }
}

if (process.argv[2] === '--serve') await serve((process.argv[3] ?? 'all') as Role)
else if (process.argv[2] === '--load') await load()
else await measure()
