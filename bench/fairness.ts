// npm run bench:fairness — one organization misbehaves, a second one goes about its normal work:
// does the calm one notice? For each hostile class (none first: the ceiling, measured in the same
// run), the calm organization sends, for BENCH_SECONDS (default 15), 20 intakes of 10 events and
// 5 small SQL queries a second and asks /readyz 2.5 times a second (so a p99 rests on 300 intakes
// and 75 queries, more with a longer BENCH_SECONDS); the bench prints its p50/p99, the
// API's event-loop delay p99 and RSS peak, /readyz answers that were not 200, the hostile
// organization's answers, and the callers' ClickHouse queries still running 2 s after the
// hostile load stopped.
//
// Three processes, so no load shares an event loop with what it measures: Tally (`--serve`, as
// `npm start` composes it, on embedded engines or DATABASE_URL), the hostile load (`--hostile`)
// and this one, the calm organization's client. Loopback only, bounded in time. Embedded engines
// and the in-process transport by default; BENCH_KAFKA=1 with KAFKA_BROKERS publishes through
// Kafka (fresh topics), REDIS_URL shares the rate limits through Redis, DATABASE_URL is used when
// set. BENCH_CLASSES=flood,otlp runs only those classes (and the ceiling).
//
// BENCH_SPLIT=1 (with BENCH_KAFKA=1, KAFKA_BROKERS and DATABASE_URL) runs Tally as the distributed
// mode does: the API in the `--serve` process, ingest, dispatcher and exporter in a fourth
// (`--workers`), on the same ClickHouse server. Every class also prints how long the calm
// organization's events took from being sent to being queryable (ingested_at − created_at), and the
// flood class its intake and queryable p99 beside the ceiling's (the Kafka path's target: 1.5×).
import { type ChildProcess, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { loadConfig } from '../services/shared/config.ts'

const DEFAULTS = loadConfig({})

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15)
const READY_TIMEOUT_MS = 180_000
const CALM_P99_TARGET_MS = 250
/** A calm tenant's intake and sent→queryable p99 beside a flood, over the same alone. */
const FLOOD_RATIO_TARGET = 1.5
const CLASSES = ['none', 'big-answer', 'heavy-rows', 'otlp', 'exports', 'flood'] as const
type HostileClass = (typeof CLASSES)[number]

const only = process.env.BENCH_CLASSES?.split(',') ?? CLASSES
const selected = CLASSES.filter((c) => c === 'none' || only.includes(c))

// ---------------------------------------------------------------------------------------------
// Tally, in a child process: answers the parent's questions about itself.

interface Probe {
  loopP99Ms: number
  rssPeakMb: number
  callerQueries: number
}

const SPLIT = process.env.BENCH_SPLIT === '1'
if (SPLIT && !(process.env.BENCH_KAFKA && process.env.KAFKA_BROKERS && process.env.DATABASE_URL))
  throw new Error(
    'BENCH_SPLIT=1 needs BENCH_KAFKA=1, KAFKA_BROKERS and DATABASE_URL: its processes share them',
  )

/** Tally's environment, the same in the API's process and the workers' (topics named by `run`). */
function tallyEnv(run: string): Record<string, string> {
  return {
    TALLY_DATA_DIR: process.env.BENCH_DATA_DIR as string,
    // The organizations' own limits are what the flood meets: the defaults but for requests
    // (startBenchRoles lifts them all otherwise).
    TALLY_RATE_LIMIT_PER_MINUTE: '6000',
    TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: String(DEFAULTS.TALLY_RATE_LIMIT_EVENTS_PER_MINUTE),
    TALLY_RATE_LIMIT_BYTES_PER_MINUTE: String(DEFAULTS.TALLY_RATE_LIMIT_BYTES_PER_MINUTE),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    // `off` measures without per-organization engine priorities (clickhouse/priority.ts).
    ...(process.env.TALLY_QUERY_PRIORITY ? { TALLY_QUERY_PRIORITY: process.env.TALLY_QUERY_PRIORITY } : {}),
    ...(process.env.BENCH_KAFKA && process.env.KAFKA_BROKERS
      ? {
          KAFKA_BROKERS: process.env.KAFKA_BROKERS,
          TALLY_REQUEST_TOPIC: `tally.bench.fairness.${run}`,
          TALLY_DLQ_TOPIC: `tally.bench.fairness.${run}.dlq`,
          TALLY_CONSUMER_GROUP_PREFIX: `bench-fairness-${run}-`,
        }
      : {}),
  }
}

/** With BENCH_SPLIT: ingest, dispatcher and exporter, in a process of their own. */
async function workers() {
  const { startBenchRoles } = await import('./tally.ts')
  const { shutdown } = await startBenchRoles(
    'bench fairness workers',
    tallyEnv(process.env.BENCH_RUN as string),
    {
      api: false,
      ingest: true,
      dispatcher: true,
      exporter: true,
    },
  )
  process.on('message', async () => {
    await shutdown.run('bench done')
    process.exit(0)
  })
  process.send?.('ready')
}

async function serve() {
  const { startBenchTally } = await import('./tally.ts')
  const run = Date.now().toString(36)
  const tally = await startBenchTally(
    'bench fairness calm',
    tallyEnv(run),
    SPLIT ? { api: true, ingest: false, dispatcher: false, exporter: false } : undefined,
  )
  // Started once the API's process owns the ClickHouse server: the workers attach to it.
  const split = SPLIT
    ? fork(new URL(import.meta.url).pathname, ['--workers'], { env: { ...process.env, BENCH_RUN: run } })
    : undefined
  if (split)
    await new Promise((resolve, reject) => {
      split.once('message', resolve)
      split.once('exit', (code) =>
        reject(new Error(`the workers' process exited (${code}) before it was ready`)),
      )
    })
  const sql = tally.engines.postgres?.sql
  const ch = tally.engines.clickhouse?.client
  if (!sql || !ch) throw new Error('the bench needs Postgres and ClickHouse')
  const { createApiKeyRepo } = await import('../services/api/keys/repo.ts')
  const keys = createApiKeyRepo(sql)
  // One hostile organization per class, four keys each: no class inherits another's windows.
  const hostile: Record<string, string[]> = {}
  for (const kind of CLASSES) {
    const org = await keys.createOrganization(`bench fairness ${kind}`)
    hostile[kind] = [org.secret]
    for (let i = 1; i < 4; i++) {
      const key = await keys.create({ organizationId: org.organization.id, name: `key-${i}`, role: 'admin' })
      hostile[kind].push(key.secret)
    }
  }

  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  let rssPeak = 0
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
  }, 100)
  process.send?.({ url: tally.url, calm: tally.key, hostile })
  process.on('message', async (m: string | { queryable: { from: number; events: number } }) => {
    if (typeof m === 'object') {
      // The calm organization's events sent since `from`: once all are queryable, how long each took.
      const { from, events } = m.queryable
      const deadline = Date.now() + 60_000
      for (;;) {
        const rs = await ch.query({
          query: `SELECT count() AS n, quantileExact(0.99)(toUnixTimestamp64Milli(ingested_at) - toUnixTimestamp64Milli(request_created_at)) AS p99
                  FROM request_response_rmt FINAL
                  WHERE organization_id = {org:UUID} AND request_created_at >= fromUnixTimestamp64Milli({from:Int64})`,
          query_params: { org: tally.organizationId, from },
          format: 'JSONEachRow',
        })
        const [row] = await rs.json<{ n: string; p99: number }>()
        if (Number(row?.n) >= events || Date.now() > deadline) {
          process.send?.({ queryableP99Ms: Number(row?.n) >= events ? Number(row?.p99) : Number.NaN })
          return
        }
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    } else if (m === 'reset') {
      loop.reset()
      rssPeak = process.memoryUsage.rss()
      process.send?.('reset')
    } else if (m === 'probe') {
      const rs = await ch.query({
        query: "SELECT count() AS n FROM system.processes WHERE user = 'tally_sql'",
        format: 'JSONEachRow',
      })
      const [{ n } = { n: '0' }] = await rs.json<{ n: string }>()
      const probe: Probe = {
        loopP99Ms: loop.percentile(99) / 1e6,
        rssPeakMb: rssPeak / 2 ** 20,
        callerQueries: Number(n),
      }
      process.send?.(probe)
    } else if (m === 'stop') {
      clearInterval(sampler)
      if (split) {
        split.send('stop')
        await new Promise((resolve) => split.once('exit', resolve))
      }
      await tally.shutdown.run('bench done')
      process.exit(0)
    }
  })
}

// ---------------------------------------------------------------------------------------------
// The hostile organization, in a child process of its own until told to stop.

/** OTLP/JSON of `n` small GenAI spans (hex ids): 24,000 of them stay under the 10 MB body limit. */
function otlpJson(n: number): string {
  const now = BigInt(Date.now()) * 1_000_000n
  const spans = Array.from({ length: n }, () => ({
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    name: 'chat',
    kind: 3,
    startTimeUnixNano: String(now - 1_000_000_000n),
    endTimeUnixNano: String(now),
    attributes: [
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o-mini' } },
      { key: 'gen_ai.usage.input_tokens', value: { intValue: '12' } },
    ],
  }))
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] })
}

async function hostile() {
  const kind = process.env.BENCH_CLASS as HostileClass
  const url = process.env.BENCH_URL as string
  const keys = JSON.parse(process.env.BENCH_KEYS as string) as string[]
  const auth = (i: number) => ({ authorization: `Bearer ${keys[i % keys.length]}` })
  const answers: Record<string, number> = {}
  let stopping = false
  process.on('message', () => {
    stopping = true
  })
  const count = (status: number | string) => {
    answers[status] = (answers[status] ?? 0) + 1
  }
  /** `workers` loops each sending what `send` sends, until the parent says stop. */
  const loops = (workers: number, send: (i: number) => Promise<Response>) =>
    Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        for (let i = w; !stopping; i += workers) {
          try {
            const res = await send(i)
            count(res.status)
            await res.arrayBuffer()
          } catch (err) {
            count((err as Error).name)
          }
        }
      }),
    )
  const sql = (query: string) => () =>
    fetch(`${url}/v1/sql/query`, {
      method: 'POST',
      headers: { ...auth(0), 'content-type': 'application/json' },
      body: JSON.stringify({ sql: query }),
    })
  if (kind === 'big-answer') await loops(3, sql('SELECT repeat(char(1), 640) AS s FROM numbers(100000)'))
  else if (kind === 'heavy-rows')
    await loops(
      3,
      sql('SELECT sum(editDistance(randomString(40000), reverse(randomString(40000)))) FROM numbers(200)'),
    )
  else if (kind === 'otlp') {
    const body = otlpJson(24_000)
    await loops(3, () =>
      fetch(`${url}/v1/traces`, {
        method: 'POST',
        headers: { ...auth(0), 'content-type': 'application/json' },
        body,
      }),
    )
  } else if (kind === 'exports') {
    const start = new Date(Date.now() - 89 * 86_400_000)
    start.setUTCHours(0, 0, 0, 0)
    const to = new Date(Date.now() - 3_600_000)
    to.setUTCMinutes(0, 0, 0)
    await Promise.all([
      loops(2, (i) =>
        fetch(`${url}/v1/exports/schedules`, {
          method: 'POST',
          headers: { ...auth(i), 'content-type': 'application/json' },
          body: JSON.stringify({ period: 'hourly', format: 'csv', start: start.toISOString() }),
        }),
      ),
      loops(2, (i) =>
        fetch(`${url}/v1/exports`, {
          method: 'POST',
          headers: { ...auth(i), 'content-type': 'application/json' },
          body: JSON.stringify({ from: start.toISOString(), to: to.toISOString(), format: 'jsonl' }),
        }),
      ),
    ])
  } else if (kind === 'flood') {
    // 200 intakes of 100 events a second from four keys, paced, whatever the answers.
    const body = JSON.stringify({ events: Array.from({ length: 100 }, () => ({ model: 'gpt-4o-mini' })) })
    const t0 = performance.now()
    let sent = 0
    const inFlight = new Set<Promise<void>>()
    while (!stopping) {
      const due = Math.floor(((performance.now() - t0) / 1000) * 200)
      for (; sent < due && inFlight.size < 64; sent++) {
        const p: Promise<void> = fetch(`${url}/v1/request/log`, {
          method: 'POST',
          headers: { ...auth(sent), 'content-type': 'application/json' },
          body,
        })
          .then(async (res) => {
            count(res.status)
            await res.arrayBuffer()
          })
          .catch((err: Error) => count(err.name))
          .finally(() => inFlight.delete(p))
        inFlight.add(p)
      }
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await Promise.all(inFlight)
  }
  process.send?.(answers, () => process.exit(0))
}

// ---------------------------------------------------------------------------------------------
// The calm organization, in this process.

interface Calm {
  intake: number[]
  /** Events acknowledged (201). */
  events: number
  sql: number[]
  failures: Record<string, number>
  readyNot200: number
}

async function calmFor(url: string, key: string, ms: number): Promise<Calm> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const calm: Calm = { intake: [], events: 0, sql: [], failures: {}, readyNot200: 0 }
  const until = performance.now() + ms
  const timed = async (into: number[], what: string, send: () => Promise<Response>) => {
    const t = performance.now()
    try {
      const res = await send()
      await res.arrayBuffer()
      into.push(performance.now() - t)
      if (res.status >= 300)
        calm.failures[`${what} ${res.status}`] = (calm.failures[`${what} ${res.status}`] ?? 0) + 1
    } catch (err) {
      calm.failures[`${what} ${(err as Error).name}`] =
        (calm.failures[`${what} ${(err as Error).name}`] ?? 0) + 1
    }
  }
  const pending: Promise<void>[] = []
  for (let tick = 0; performance.now() < until; tick++) {
    // Sent now (its created_at): queryable when its ingested_at says.
    const createdAt = Date.now()
    const events = Array.from({ length: 10 }, (_, i) => ({
      model: 'gpt-4o-mini',
      prompt_tokens: tick + i,
      created_at: createdAt,
    }))
    pending.push(
      timed(calm.intake, 'intake', async () => {
        const res = await fetch(`${url}/v1/request/log`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ events }),
        })
        if (res.status === 201) calm.events += events.length
        return res
      }),
    )
    if (tick % 4 === 0)
      pending.push(
        timed(calm.sql, 'sql', () =>
          fetch(`${url}/v1/sql/query`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ sql: 'SELECT model, count() AS n FROM requests GROUP BY model' }),
          }),
        ),
      )
    if (tick % 8 === 0)
      pending.push(
        fetch(`${url}/readyz`).then(
          async (res) => {
            await res.arrayBuffer()
            if (res.status !== 200) calm.readyNot200++
          },
          () => {
            calm.readyNot200++
          },
        ),
      )
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await Promise.all(pending)
  return calm
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted.length
    ? (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number)
    : Number.NaN
}

const ask = <T>(child: ChildProcess, message: string | object): Promise<T> =>
  new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T))
    child.send(message)
  })

async function measure() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-fairness-'))
  chmodSync(dataDir, 0o755)
  const tally = fork(new URL(import.meta.url).pathname, ['--serve'], {
    env: { ...process.env, BENCH_DATA_DIR: dataDir },
  })
  try {
    const ready = await new Promise<{ url: string; calm: string; hostile: Record<string, string[]> }>(
      (resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('Tally did not start in time')), READY_TIMEOUT_MS)
        tally.once('message', (m) => {
          clearTimeout(timer)
          resolve(m as { url: string; calm: string; hostile: Record<string, string[]> })
        })
        tally.once('exit', (code) => reject(new Error(`Tally exited (${code}) before it was ready`)))
      },
    )
    // A warm-up: the first queries compile and cache what every later one reuses.
    await calmFor(ready.url, ready.calm, 3_000)
    const rows: string[] = []
    let ceiling: { intakeP99: number; queryableP99Ms: number; intakes: number } | undefined
    let flood: typeof ceiling
    for (const kind of selected) {
      await ask(tally, 'reset')
      const load =
        kind === 'none'
          ? undefined
          : fork(new URL(import.meta.url).pathname, ['--hostile'], {
              env: {
                ...process.env,
                BENCH_CLASS: kind,
                BENCH_URL: ready.url,
                BENCH_KEYS: JSON.stringify(ready.hostile[kind]),
              },
            })
      const answers = load
        ? new Promise<Record<string, number>>((resolve) =>
            load.once('message', (m) => resolve(m as Record<string, number>)),
          )
        : Promise.resolve({})
      const from = Date.now()
      const calm = await calmFor(ready.url, ready.calm, SECONDS * 1000)
      load?.send('stop')
      const hostileAnswers = await answers
      const { queryableP99Ms } = await ask<{ queryableP99Ms: number }>(tally, {
        queryable: { from, events: calm.events },
      })
      const intakeP99 = percentile(calm.intake, 0.99)
      const intakes = calm.intake.length
      if (kind === 'none') ceiling = { intakeP99, queryableP99Ms, intakes }
      if (kind === 'flood') flood = { intakeP99, queryableP99Ms, intakes }
      // What the hostile organization started must have ended on the server 2 s after it stopped.
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      const probe = await ask<Probe>(tally, 'probe')
      const p99 = Math.max(percentile(calm.intake, 0.99), percentile(calm.sql, 0.99))
      rows.push(
        [
          kind.padEnd(11),
          percentile(calm.intake, 0.5).toFixed(0).padStart(6),
          percentile(calm.intake, 0.99).toFixed(0).padStart(6),
          percentile(calm.sql, 0.5).toFixed(0).padStart(6),
          percentile(calm.sql, 0.99).toFixed(0).padStart(6),
          (p99 < CALM_P99_TARGET_MS ? 'met' : 'NOT met').padStart(7),
          queryableP99Ms.toFixed(0).padStart(9),
          probe.loopP99Ms.toFixed(0).padStart(7),
          probe.rssPeakMb.toFixed(0).padStart(7),
          String(calm.readyNot200).padStart(8),
          String(probe.callerQueries).padStart(8),
          `  calm failures ${JSON.stringify(calm.failures)}; hostile answers ${JSON.stringify(hostileAnswers)}`,
        ].join(' '),
      )
      console.log(rows.at(-1))
    }
    console.log(
      `\nclass       intake ms      sql ms       p99<${CALM_P99_TARGET_MS} queryable  loop p99  RSS MB  readyz≠200  queries 2 s after`,
    )
    console.log('             p50    p99    p50    p99           p99 ms')
    for (const row of rows) console.log(row)
    if (ceiling && flood) {
      const ratio = (a: number, b: number) => (a / b).toFixed(2)
      console.log(
        `\nflood beside the ceiling (target ≤ ${FLOOD_RATIO_TARGET}; p99 of ${flood.intakes} intakes against ${ceiling.intakes}): calm intake p99 ${ratio(flood.intakeP99, ceiling.intakeP99)}×, ` +
          `sent→queryable p99 ${ratio(flood.queryableP99Ms, ceiling.queryableP99Ms)}× ` +
          `(${SPLIT ? 'API, workers and ClickHouse as separate processes, Kafka' : 'every role in one process'})`,
      )
    }
    console.log(
      `\n'none' is the ceiling: the calm organization alone, same run. ${SECONDS} s per class; load average at the end: ${loadavg()[0]?.toFixed(2)}`,
    )
  } finally {
    tally.send('stop')
    await new Promise((resolve) => tally.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--serve') await serve()
else if (process.argv[2] === '--workers') await workers()
else if (process.argv[2] === '--hostile') await hostile()
else await measure()
