// npm run bench:ingest — the distributed intake path on this machine: HTTP intake → real Kafka
// (acks=all) → consumer group tally-ingest → embedded ClickHouse server, with ~2 KB events.
// Prints events/s accepted at the API, events/s written to ClickHouse, p50/p99 from acceptance
// (the 201) to queryable, and, in the same run, raw client.insert rows/s of the same rows as the
// ceiling. Loopback only. Runs BENCH_SECONDS (default 60) of load; `-- --soak` (or
// BENCH_SECONDS=300) for the 5-minute RSS soak. Uses KAFKA_BROKERS when set, otherwise starts
// infra/local's Kafka for the run and stops it after. DATABASE_URL is used when set (else
// embedded Postgres). Tally runs in a child process so it does not share the load generator's
// event loop; `-- --split` runs the API and ingest roles in two processes instead.
import { execFileSync, fork } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { cpuSeconds, descendantPids, portOwner } from './processes.ts'
import { UNLIMITED } from './tally.ts'

const SOAK = process.argv.includes('--soak')
// API and ingest in two processes, as the distributed deployment runs them, on one data directory:
// the first starts the embedded ClickHouse server, the other attaches to it.
const SPLIT = process.argv.includes('--split') || process.env.BENCH_SPLIT === '1'
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SOAK ? 300 : 60))
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const BATCH = Number(process.env.BENCH_BATCH ?? 100)
// Offered load in events/s (the POSTs are paced to it); unset: as fast as the API accepts.
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined
const CEILING_ROWS = 200_000
const TARGET_RATE = 10_000
const TARGET_SHARE = 0.5
const TARGET_P99_MS = 2_000
// A child that is not ready by then (a dependency that never answers) fails the run, named.
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_MS ?? 180_000)

type Role = 'all' | 'api' | 'ingest'

type Command =
  | { cmd: 'ceiling'; rows: number }
  | { cmd: 'count'; org: string }
  | { cmd: 'found'; org: string; ids: string[] }
  | { cmd: 'rss' }
  | { cmd: 'inserts' }
  | { cmd: 'stop' }

/** One event of about 2 KB: a chat request with a few messages and its completion. */
function event(i: number) {
  const words = (n: number) => Array.from({ length: n }, (_, k) => `word${(i + k) % 97}`).join(' ')
  return {
    model: i % 3 ? 'gpt-4o-mini' : 'claude-3-5-haiku',
    latency_ms: 200 + (i % 800),
    user_id: `user-${i % 50}`,
    session_id: `session-${i % 200}`,
    properties: { env: 'bench', tenant: `t-${i % 10}` },
    request: {
      model: 'gpt-4o-mini',
      temperature: 0.2,
      messages: [
        { role: 'system', content: words(60) },
        { role: 'user', content: words(90) },
      ],
    },
    response: {
      id: `chatcmpl-${i}`,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: words(70) }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 180, completion_tokens: 90, total_tokens: 270 },
    },
  }
}

if (process.argv[2] === '--serve') await serve((process.argv[3] ?? 'all') as Role)
else await measure()

/**
 * A child: Tally with Kafka and embedded ClickHouse in the given role(s), answering the parent's
 * commands over IPC. Every run shares one topic and consumer group prefix, named by the parent.
 */
async function serve(role: Role) {
  const { loadConfig } = await import('../services/shared/config.ts')
  const { createLogger } = await import('../services/shared/logger.ts')
  const { createShutdown } = await import('../services/shared/shutdown.ts')
  const { startTally } = await import('../services/standalone/compose.ts')
  const { createApiKeyRepo } = await import('../services/api/keys/repo.ts')
  const { toRequestEvent } = await import('../services/api/requests/intake.ts')
  const { loadPriceTable } = await import('../services/api/requests/prices.ts')
  const { INSERT_COLUMNS, toCompactRow } = await import('../services/shared/clickhouse/request-table.ts')

  const dataDir = process.env.BENCH_DATA_DIR as string
  const run = process.env.BENCH_RUN as string
  const config = loadConfig({
    PORT: '0',
    TALLY_DATA_DIR: dataDir,
    TALLY_LOG_LEVEL: 'warn',
    ...UNLIMITED,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    TALLY_REQUEST_TOPIC: `tally.bench.${run}`,
    TALLY_DLQ_TOPIC: `tally.bench.${run}.dlq`,
    TALLY_CONSUMER_GROUP_PREFIX: `bench-${run}.`,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  })
  const log = createLogger(config, 'bench')
  const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
  const started = await startTally(config, log, shutdown, {
    api: role !== 'ingest',
    ingest: role !== 'api',
    dispatcher: false,
    exporter: false,
  })
  const sql = started.engines.postgres?.sql
  const ch = started.engines.clickhouse?.client
  // The ingest role alone has no Postgres.
  if ((role !== 'ingest' && (!started.url || !sql)) || !ch) throw new Error('tally did not start')
  const count = async (orgId: string) => {
    const rs = await ch.query({
      query: 'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID}',
      query_params: { org: orgId },
      format: 'JSONEachRow',
    })
    return Number((await rs.json<{ n: number }>())[0]?.n)
  }

  const reply = (m: unknown) => (process.send as (m: unknown) => void)(m)
  process.on('message', async ({ id, ...m }: Command & { id: number }) => {
    const send = (answer: object) => reply({ id, ...answer })
    if (m.cmd === 'ceiling') {
      // The same rows the pipeline writes, inserted straight through client.insert.
      const prices = loadPriceTable()
      const ceilingOrg = crypto.randomUUID() // ClickHouse keeps no organizations: any id will do
      const rows = Array.from({ length: 5_000 }, (_, i) =>
        toCompactRow(toRequestEvent({ status: 200, cached: false, ...event(i) }, ceilingOrg, prices)),
      )
      const started = performance.now()
      for (let done = 0; done < m.rows; done += rows.length) {
        // request_id is the second column; the same format and columns as the consumer's inserts.
        const chunk = rows.map((r) => r.with(1, crypto.randomUUID()))
        await ch.insert({
          table: 'request_response_rmt',
          columns: [...INSERT_COLUMNS],
          values: chunk,
          format: 'JSONCompactEachRow',
        })
      }
      const seconds = (performance.now() - started) / 1000
      send({ ceiling: m.rows / seconds, bytes: JSON.stringify(rows[0]).length })
    } else if (m.cmd === 'count') send({ count: await count(m.org) })
    else if (m.cmd === 'found') {
      const rs = await ch.query({
        query:
          'SELECT toString(request_id) AS id FROM request_response_rmt WHERE organization_id = {org:UUID} AND request_id IN {ids:Array(UUID)}',
        query_params: { org: m.org, ids: m.ids },
        format: 'JSONEachRow',
      })
      send({ found: (await rs.json<{ id: string }>()).map((r) => r.id) })
    } else if (m.cmd === 'rss') send({ rss: process.memoryUsage().rss })
    else if (m.cmd === 'inserts') {
      const { register } = await import('prom-client')
      const text = await register.metrics()
      const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
      send({ inserts: read('tally_ingest_batch_events_count'), rows: read('tally_ingest_batch_events_sum') })
    } else if (m.cmd === 'stop') {
      await shutdown.run('bench finished')
      process.exit(0)
    }
  })
  if (role === 'ingest') return reply({ id: 0 })
  if (!sql) throw new Error('the API role needs Postgres')
  const { organization, secret } = await createApiKeyRepo(sql).createOrganization(`bench-${run}`)
  reply({ id: 0, url: started.url, apiKey: secret, org: organization.id })
}

/** The parent: starts Kafka if needed and the child, drives the load, prints the figures. */
async function measure() {
  const env = { ...process.env }
  if (env.KAFKA_BROKERS) return await drive(env)
  const infraDir = mkdtempSync(join(tmpdir(), 'tally-bench-infra-'))
  // Whatever ends the run (an error, a failed start, Ctrl-C), the Kafka it started is stopped.
  let stopped = false
  const stopInfra = () => {
    if (stopped) return
    stopped = true
    execFileSync('bash', ['infra/local/down.sh'], {
      env: { ...env, TALLY_INFRA_DIR: infraDir },
      stdio: 'inherit',
    })
    rmSync(infraDir, { recursive: true, force: true })
  }
  const onSignal = (signal: NodeJS.Signals) => {
    stopInfra()
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    console.log('KAFKA_BROKERS unset: starting infra/local Kafka for this run…')
    execFileSync('bash', ['infra/local/up.sh'], {
      env: { ...env, TALLY_INFRA_DIR: infraDir },
      stdio: 'inherit',
    })
    const m = /KAFKA_BROKERS=(\S+)/.exec(readFileSync(join(infraDir, 'env'), 'utf8'))
    env.KAFKA_BROKERS = m?.[1]
    await drive(env)
  } finally {
    stopInfra()
  }
}

/** A Tally child process and its IPC questions. */
function startChild(role: Role, env: NodeJS.ProcessEnv) {
  // BENCH_CHILD_NODE_OPTIONS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to Tally's processes only.
  const childArgs = process.env.BENCH_CHILD_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []
  const child = fork(new URL(import.meta.url).pathname, ['--serve', role], {
    env,
    stdio: 'inherit',
    execArgv: [...process.execArgv, ...childArgs],
  })
  // Answers come back in any order (a slow query, a quick RSS reading): matched by id.
  const replies = new Map<
    number,
    { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }
  >()
  let nextId = 1
  child.on('message', (m: { id: number }) => {
    replies.get(m.id)?.resolve(m)
    replies.delete(m.id)
  })
  // A child that dies (a failed start, a crash) fails whatever waits on it instead of hanging.
  child.on('exit', (code, signal) => {
    for (const { reject } of replies.values())
      reject(new Error(`Tally's ${role} process exited (${signal ?? code})`))
    replies.clear()
  })
  const running = () => child.exitCode === null && child.signalCode === null
  return {
    /** The answer to `command`; with null, the child's ready message (within READY_TIMEOUT_MS). */
    ask<T>(command: Command | null): Promise<T> {
      return new Promise((resolve, reject) => {
        if (!running()) return reject(new Error(`Tally's ${role} process is not running`))
        const id = command ? nextId++ : 0
        const timer = command
          ? undefined
          : setTimeout(() => {
              replies.delete(id)
              child.kill()
              reject(new Error(`Tally's ${role} process was not ready within ${READY_TIMEOUT_MS / 1000} s`))
            }, READY_TIMEOUT_MS)
        const settle = (finish: () => void) => {
          clearTimeout(timer)
          finish()
        }
        replies.set(id, {
          resolve: (m) => settle(() => resolve(m as T)),
          reject: (e) => settle(() => reject(e)),
        })
        if (command) child.send({ ...command, id })
      })
    },
    async stop(): Promise<void> {
      if (!running()) return
      const exited = new Promise((r) => child.once('exit', r))
      child.send({ cmd: 'stop', id: nextId++ })
      await exited
    },
    kill: () => running() && child.kill(),
    pid: child.pid as number,
  }
}

/** Starts Tally's process(es) on `env`'s Kafka, drives the load and prints the figures. */
async function drive(baseEnv: NodeJS.ProcessEnv) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-ingest-'))
  // Embedded Postgres runs as the `postgres` user under root: it must be able to enter the directory.
  chmodSync(dataDir, 0o755)
  const env = { ...baseEnv, BENCH_RUN: Date.now().toString(36), BENCH_DATA_DIR: dataDir }
  // The ingest process first, so its consumer is in the group before the load starts.
  const back = startChild(SPLIT ? 'ingest' : 'all', env)
  const children = [back]
  const rssAll = async () => {
    let total = 0
    for (const c of children) total += (await c.ask<{ rss: number }>({ cmd: 'rss' })).rss
    return total
  }
  try {
    await back.ask(null)
    const front = SPLIT ? startChild('api', env) : back
    if (SPLIT) children.push(front)
    const { url, apiKey, org } = await front.ask<{ url: string; apiKey: string; org: string }>(null)
    const ask = back.ask

    const { ceiling, bytes } = await ask<{ ceiling: number; bytes: number }>({
      cmd: 'ceiling',
      rows: CEILING_ROWS,
    })
    console.log(
      `raw client.insert ceiling: ${Math.round(ceiling)} rows/s (${CEILING_ROWS} rows of ~${bytes} B, 5,000 per insert)`,
    )

    const bodies = Array.from({ length: 16 }, (_, b) =>
      JSON.stringify(Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i))),
    )
    const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 })
    let accepted = 0
    let failed = 0
    const pending: { id: string; at: number }[] = []
    const latencies: number[] = []
    const rss: number[] = [await rssAll()]
    const startedAt = performance.now()
    const until = startedAt + SECONDS * 1000
    let n = 0

    async function worker() {
      while (performance.now() < until) {
        const i = n++
        // Paced: POST i goes out no earlier than its slot at RATE events/s.
        if (RATE) {
          const slot = startedAt + ((i * BATCH) / RATE) * 1000
          const wait = slot - performance.now()
          if (wait > 0) await new Promise((r) => setTimeout(r, wait))
          if (performance.now() >= until) break
        }
        const body = bodies[i % bodies.length] as string
        const res = await pool.request({
          path: '/v1/request/log',
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body,
        })
        const text = await res.body.text()
        if (res.statusCode !== 201) {
          failed++
          if (failed < 5) console.error(`intake answered ${res.statusCode}: ${text.slice(0, 200)}`)
          continue
        }
        accepted += BATCH
        if (pending.length < 2_000)
          pending.push({ id: JSON.parse(text).data.request_ids[0], at: performance.now() })
      }
    }

    async function poll() {
      while (performance.now() < until || pending.length > 0) {
        const ids = pending.slice(0, 500)
        if (ids.length > 0) {
          const { found } = await ask<{ found: string[] }>({ cmd: 'found', org, ids: ids.map((p) => p.id) })
          const now = performance.now()
          const set = new Set(found)
          for (let i = pending.length - 1; i >= 0; i--) {
            const p = pending[i] as { id: string; at: number }
            if (set.has(p.id)) {
              latencies.push(now - p.at)
              pending.splice(i, 1)
            }
          }
        }
        if (performance.now() > until + 60_000) break
        await new Promise((r) => setTimeout(r, 100))
      }
    }

    // CPU of every process in the pipeline over the load and drain, for the per-event budget.
    const broker = portOwner(baseEnv.KAFKA_BROKERS)
    const cpuProcesses: [string, number][] = SPLIT
      ? [
          ['API', front.pid],
          ['ingest', back.pid],
        ]
      : [['Tally', back.pid]]
    for (const pid of [...descendantPids(back.pid), ...(SPLIT ? descendantPids(front.pid) : [])])
      cpuProcesses.push(['ClickHouse server', pid])
    if (broker) cpuProcesses.push(['Kafka broker', broker])
    const cpuBefore = cpuProcesses.map(([, pid]) => cpuSeconds(pid))
    const generatorBefore = process.cpuUsage()
    const sampler = setInterval(async () => rss.push(await rssAll()), 10_000)
    const polling = poll()
    await Promise.all(Array.from({ length: CONNECTIONS }, worker))
    const loadSeconds = (performance.now() - startedAt) / 1000
    const writtenAtEnd = (await ask<{ count: number }>({ cmd: 'count', org })).count
    let written = writtenAtEnd
    const drainDeadline = performance.now() + 60_000
    while (written < accepted && performance.now() < drainDeadline) {
      await new Promise((r) => setTimeout(r, 200))
      written = (await ask<{ count: number }>({ cmd: 'count', org })).count
    }
    const allWrittenSeconds = (performance.now() - startedAt) / 1000
    // Summed by name: the ClickHouse server may be more than one process (its sandbox).
    const byName = new Map<string, number>()
    cpuProcesses.forEach(([name, pid], i) => {
      byName.set(name, (byName.get(name) ?? 0) + cpuSeconds(pid) - (cpuBefore[i] as number))
    })
    const cpuUsed: [string, number][] = [...byName]
    const generator = process.cpuUsage(generatorBefore)
    cpuUsed.push(['load generator', (generator.user + generator.system) / 1e6])
    await polling
    clearInterval(sampler)
    rss.push(await rssAll())
    const inserts = await ask<{ inserts: number; rows: number }>({ cmd: 'inserts' })
    await pool.close()

    latencies.sort((a, b) => a - b)
    const pct = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
    const acceptedRate = accepted / loadSeconds
    const writtenRate = written / allWrittenSeconds
    const mb = (b: number) => `${Math.round(b / 1024 / 1024)} MB`
    // Stable: the last third of the readings averages within 10% of the first third (after start-up).
    const third = Math.max(1, Math.floor(rss.length / 3))
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length
    const rssGrowth = mean(rss.slice(-third)) / mean(rss.slice(1, 1 + third)) - 1
    console.log(
      [
        `load: ${SECONDS}s, ${RATE ? `paced to ${RATE} events/s` : 'unpaced'}, ${CONNECTIONS} connections, ${BATCH} events per POST (~${Math.round(
          (bodies[0] as string).length / BATCH,
        )} B per event on the wire); ${failed} failed POSTs`,
        `accepted at the API:   ${Math.round(acceptedRate)} events/s (${accepted} events)`,
        `written to ClickHouse: ${Math.round(writtenRate)} events/s (${written} of ${accepted}, all written ${allWrittenSeconds.toFixed(1)}s after start; ${writtenAtEnd} when the load stopped)`,
        `share of raw ceiling:  ${((writtenRate / ceiling) * 100).toFixed(0)}%`,
        `ClickHouse inserts by the consumer: ${inserts.inserts}, ${Math.round(inserts.rows / inserts.inserts)} rows each on average`,
        `CPU per event written (µs, over the load and drain): ${cpuUsed
          .map(([name, s]) => `${name} ${Math.round((s * 1e6) / Math.max(written, 1))}`)
          .join(', ')}; total ${Math.round(
          (cpuUsed.reduce((sum, [, s]) => sum + s, 0) * 1e6) / Math.max(written, 1),
        )} (10,000 events/s on ${availableParallelism()} cores allows ${Math.round((availableParallelism() * 1e6) / TARGET_RATE)})`,
        `acceptance → queryable: p50 ${Math.round(pct(0.5))} ms, p99 ${Math.round(pct(0.99))} ms (${latencies.length} samples, 100 ms poll)`,
        `${SPLIT ? 'API and ingest processes (RSS summed)' : 'RSS of the Tally process'} (every 10 s): ${rss.map(mb).join(' → ')}`,
        `RSS, last third of the run against the first: ${rssGrowth >= 0 ? '+' : ''}${(rssGrowth * 100).toFixed(0)}%`,
        `machine load average (1/5/15 min): ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' / ')} on ${availableParallelism()} cores (figures from a busy machine say little)`,
        `targets: ≥ ${TARGET_RATE} events/s end to end ${writtenRate >= TARGET_RATE ? 'MET' : 'MISSED'}; ≥ ${
          TARGET_SHARE * 100
        }% of ceiling ${writtenRate >= TARGET_SHARE * ceiling ? 'MET' : 'MISSED'}; p99 < ${TARGET_P99_MS} ms ${
          pct(0.99) < TARGET_P99_MS ? 'MET' : 'MISSED'
        }; RSS stable (within 10%) ${rssGrowth <= 0.1 ? 'MET' : 'MISSED'}${
          SECONDS < 300 ? ' (the target is for 5 minutes: `-- --soak`)' : ''
        }; lost events: ${accepted - written}`,
      ].join('\n'),
    )
    for (const c of [...children].reverse()) await c.stop()
  } finally {
    for (const c of children) c.kill()
    // A killed child's ClickHouse server stops once it sees its owner gone: retry while it does.
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
  }
}
