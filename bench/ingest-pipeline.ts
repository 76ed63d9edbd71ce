/**
 * The intake pipeline of bench:ingest and bench:cluster: Tally's processes as children answering
 * the parent over IPC, the ~2 KB event they are sent, the Kafka they run on, and the load: paced or
 * unpaced POSTs of `/v1/request/log`, acceptance → queryable, and the CPU each process used.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { askableChild, cpuSeconds } from './processes.ts'
import { UNLIMITED } from './tally.ts'

// A child that is not ready by then (a dependency that never answers) fails the run, named.

export type Role = 'all' | 'api' | 'ingest'

export type Command =
  | { cmd: 'ceiling'; rows: number }
  | { cmd: 'count'; org: string }
  | { cmd: 'found'; org: string; ids: string[] }
  | { cmd: 'rss' }
  | { cmd: 'inserts' }
  | { cmd: 'stop' }

export type Child = ReturnType<typeof startChild>

/** The variables of this process among `names` that are set. */
const passOn = (names: string[]) =>
  Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]]] : [])))

/** One event of about 2 KB: a chat request with a few messages and its completion. */
export function event(i: number) {
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

/**
 * A child: Tally with Kafka and embedded ClickHouse (or the ClickHouse of CLICKHOUSE_URL) in the
 * given role(s), answering the parent's commands over IPC. Every run shares one topic and consumer group prefix, named by the parent.
 * Started by startChild (bench/ingest-child.ts is its entry).
 */
export async function serve(role: Role) {
  const { loadConfig } = await import('../services/shared/config.ts')
  const { createLogger } = await import('../services/shared/logger.ts')
  const { createShutdown } = await import('../services/shared/shutdown.ts')
  const { startTally } = await import('../services/standalone/compose.ts')
  const { createApiKeyRepo } = await import('../services/api/keys/repo.ts')
  const { toRequestEvent } = await import('../services/api/requests/intake.ts')
  const { loadPriceTable } = await import('../services/api/requests/prices.ts')
  const { INSERT_COLUMNS, toCompactRow } = await import('../services/shared/clickhouse/request-table.ts')
  const { loadRequestCodec } = await import('../services/shared/events/codec.ts')
  const { avroContainer } = await import('../services/ingest/avro-container.ts')
  const { insertRequestContainer } = await import('../services/ingest/handler.ts')

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
    // A ClickHouse the parent started (bench:cluster: one node, or a node of a cluster) instead of
    // the embedded server on the data directory.
    ...passOn([
      'CLICKHOUSE_URL',
      'CLICKHOUSE_SQL_URL',
      'TALLY_CLICKHOUSE_CLUSTER',
      'TALLY_CLICKHOUSE_CLUSTER_NODES',
    ]),
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
      // The same rows the pipeline writes, inserted straight into ClickHouse, in both formats:
      // JSONCompactEachRow rows (what the consumer wrote until 2026-11-27) and the Avro container
      // of the events' records the consumer writes now, each encoded before the clock starts. The
      // higher of the two is the ceiling.
      const prices = loadPriceTable()
      const ceilingOrg = crypto.randomUUID() // ClickHouse keeps no organizations: any id will do
      const events = Array.from({ length: 5_000 }, (_, i) =>
        toRequestEvent({ status: 200, cached: false, ...event(i) }, ceilingOrg, prices),
      )
      const rows = events.map(toCompactRow)
      const chunks = Math.ceil(m.rows / rows.length)
      const timed = async (insert: (chunk: number) => Promise<unknown>) => {
        const started = performance.now()
        for (let chunk = 0; chunk < chunks; chunk++) await insert(chunk)
        return (chunks * rows.length) / ((performance.now() - started) / 1000)
      }
      // request_id is the second column; the same format and columns as the consumer's inserts.
      const jsonChunks = Array.from({ length: chunks }, () => rows.map((r) => r.with(1, crypto.randomUUID())))
      const json = await timed((chunk) =>
        ch.insert({
          table: 'request_response_rmt',
          columns: [...INSERT_COLUMNS],
          values: jsonChunks[chunk] as unknown[][],
          format: 'JSONCompactEachRow',
        }),
      )
      jsonChunks.length = 0
      const codec = await loadRequestCodec()
      const container = avroContainer(codec.schema)
      const files = Array.from({ length: chunks }, () =>
        container.frame(events.map((e) => codec.body({ ...e, request_id: crypto.randomUUID() }))),
      )
      const avro = await timed((chunk) => insertRequestContainer(ch, files[chunk] as Buffer))
      send({ ceiling: Math.max(json, avro), json, avro, bytes: JSON.stringify(rows[0]).length })
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

/**
 * `drive` on a Kafka: KAFKA_BROKERS when set, otherwise infra/local's, started for the call and
 * stopped after it (on an error or a signal too).
 */
export async function withKafka(drive: (env: NodeJS.ProcessEnv) => Promise<void>): Promise<void> {
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

/** A Tally child process of this pipeline (bench/ingest-child.ts), `name` in its errors. */
export function startChild(role: Role, env: NodeJS.ProcessEnv, name: string = role) {
  return askableChild<Command>(new URL('./ingest-child.ts', import.meta.url).pathname, [role], env, name)
}

export interface Load {
  url: string
  apiKey: string
  org: string
  /** A child that reads ClickHouse: asked which of the ids sent are queryable, and the count. */
  ask: Child['ask']
  seconds: number
  connections: number
  /** Events per POST. */
  batch: number
  /** Offered load in events/s (the POSTs are paced to it); undefined: as fast as the API accepts. */
  rate?: number | undefined
  /** Processes whose CPU is counted over the load and drain, summed by name. */
  cpuProcesses: [string, number][]
}

export interface LoadResult {
  accepted: number
  failed: number
  /** Rows of the organization in ClickHouse once drained (or after 60 s of waiting for them). */
  written: number
  /** Those when the load stopped. */
  writtenAtEnd: number
  loadSeconds: number
  /** From the start until the last accepted row was written (or the drain gave up). */
  allWrittenSeconds: number
  /** Acceptance (the 201) → queryable, ms, sorted, for up to 2,000 POSTs in flight at a time. */
  latencies: number[]
  /** CPU seconds by process name over the load and drain, the load generator (this process) last. */
  cpu: [string, number][]
  /** Bytes of one event on the wire. */
  eventBytes: number
}

/**
 * `load.seconds` of POSTs of `load.batch` events on `load.connections` connections, then waits up
 * to 60 s for every accepted event to be written; polls meanwhile, every 100 ms, which of the POSTs'
 * first ids are queryable.
 */
export async function runLoad(load: Load): Promise<LoadResult> {
  const { url, apiKey, org, ask, batch, rate } = load
  const bodies = Array.from({ length: 16 }, (_, b) =>
    JSON.stringify(Array.from({ length: batch }, (_, i) => event(b * batch + i))),
  )
  const pool = new Pool(url, { connections: load.connections, pipelining: 1 })
  let accepted = 0
  let failed = 0
  const pending: { id: string; at: number }[] = []
  const latencies: number[] = []
  const startedAt = performance.now()
  const until = startedAt + load.seconds * 1000
  let n = 0

  async function worker() {
    while (performance.now() < until) {
      const i = n++
      // Paced: POST i goes out no earlier than its slot at `rate` events/s.
      if (rate) {
        const slot = startedAt + ((i * batch) / rate) * 1000
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
      accepted += batch
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

  const cpuBefore = load.cpuProcesses.map(([, pid]) => cpuSeconds(pid))
  const generatorBefore = process.cpuUsage()
  const polling = poll()
  await Promise.all(Array.from({ length: load.connections }, worker))
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
  load.cpuProcesses.forEach(([name, pid], i) => {
    byName.set(name, (byName.get(name) ?? 0) + cpuSeconds(pid) - (cpuBefore[i] as number))
  })
  const cpu: [string, number][] = [...byName]
  const generator = process.cpuUsage(generatorBefore)
  cpu.push(['load generator', (generator.user + generator.system) / 1e6])
  await polling
  await pool.close()
  latencies.sort((a, b) => a - b)
  return {
    accepted,
    failed,
    written,
    writtenAtEnd,
    loadSeconds,
    allWrittenSeconds,
    latencies,
    cpu,
    eventBytes: Math.round((bodies[0] as string).length / batch),
  }
}

/** The q-quantile (0–1) of sorted values; NaN for none. */
export const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
