// npm run bench:webhooks — webhook delivery throughput and latency against a local HTTPS receiver,
// with a bare undici loop to the same receiver as the ceiling. See bench/README.md.

import { fork, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import { loadavg } from 'node:os'
import postgres from 'postgres'
import { Agent, request } from 'undici'
import { createApiKeyRepo } from '../services/api/keys/repo.ts'
import { createWebhookRepo } from '../services/api/webhooks/repo.ts'
import { startDispatcher } from '../services/dispatcher/dispatcher.ts'
import { loadConfig } from '../services/shared/config.ts'
import { SCHEMAS_DIR } from '../services/shared/engines.ts'
import type { RequestEvent } from '../services/shared/events/request-event.ts'
import { createLogger } from '../services/shared/logger.ts'
import { migratePostgres } from '../services/shared/migrate.ts'
import { buildPayload } from '../services/shared/webhooks/payload.ts'
import { signatureHeaders } from '../services/shared/webhooks/signature.ts'
import { createScratchDatabase } from '../test/support/scratch-database.ts'
import { makeCertificates } from '../test/webhooks/support/receiver.ts'

const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000)
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 100_000)
const FRESH_RATE = Number(process.env.BENCH_FRESH_RATE ?? 200) // events/s while the backlog drains
const CEILING_SECONDS = 5
const CONNECTIONS = 32 // the dispatcher's default per destination

const mode = process.argv[2]
if (mode === '--receiver') runReceiver()
else if (!process.env.BENCH_TLS_DIR) relaunchWithTestCa()
else await runBench()

/** The receiver trusts nothing of ours but its own certificate: Node reads NODE_EXTRA_CA_CERTS at start only. */
function relaunchWithTestCa(): void {
  const certs = makeCertificates()
  try {
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1] as string, '--bench'], {
      stdio: 'inherit',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certs.caFile, BENCH_TLS_DIR: certs.dir },
    })
    process.exitCode = child.status ?? 1
  } finally {
    certs.remove()
  }
}

/** A separate process, so receiving does not share the dispatcher's event loop. */
function runReceiver(): void {
  const dir = process.env.BENCH_TLS_DIR as string
  const counts = new Map<string, number>()
  let latencies: number[] = []
  const server = createServer(
    { key: readFileSync(`${dir}/server.key`), cert: readFileSync(`${dir}/server.pem`) },
    (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const path = req.url ?? '/'
        counts.set(path, (counts.get(path) ?? 0) + 1)
        if (path === '/fresh') {
          const m = /"timestamp":"([^"]+)"/.exec(Buffer.concat(chunks).toString('latin1'))
          if (m) latencies.push(Date.now() - Date.parse(m[1] as string))
        }
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.end('ok')
      })
    },
  )
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    const address = server.address()
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 })
  })
  process.on('message', (msg: { cmd: string }) => {
    if (msg.cmd === 'stats') {
      process.send?.({ counts: Object.fromEntries(counts), latencies })
      latencies = []
    }
    if (msg.cmd === 'exit') server.close(() => process.exit(0))
  })
}

interface Stats {
  counts: Record<string, number>
  latencies: number[]
}

async function runBench(): Promise<void> {
  const receiver = fork(process.argv[1] as string, ['--receiver'], { stdio: 'inherit' })
  const port = await new Promise<number>((resolve) =>
    receiver.once('message', (m: { port: number }) => resolve(m.port)),
  )
  const stats = () =>
    new Promise<Stats>((resolve) => {
      receiver.once('message', (m: Stats) => resolve(m))
      receiver.send({ cmd: 'stats' })
    })
  const base = `https://127.0.0.1:${port}`
  console.log(
    `webhooks bench: receiver ${base}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )

  // A first round warms the JIT and the connections up: a cold loop would flatter the comparison.
  await measureCeiling(`${base}/ceiling`)
  const first = await measureCeiling(`${base}/ceiling`)
  let ceiling = first.rate
  console.log(
    `ceiling (bare undici, ${CONNECTIONS} connections, signed POSTs): ${first.rate.toFixed(0)}/s, ` +
      `${first.cpuMicros.toFixed(0)} µs CPU per POST`,
  )

  const db = await benchDatabase()
  const config = loadConfig({
    DATABASE_URL: db.url,
    TALLY_LOG_LEVEL: 'warn',
    TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  })
  const log = createLogger(config, 'bench-webhooks')
  const sql = postgres(db.url, { max: 10, onnotice: () => {} })
  await migratePostgres(sql, `${SCHEMAS_DIR}postgres`, log)
  const { organization } = await createApiKeyRepo(sql).createOrganization('bench')
  const webhooks = createWebhookRepo(sql)
  const hook = (path: string) =>
    webhooks.create({
      organizationId: organization.id,
      destination: `${base}${path}`,
      sampleRate: 100,
      propertyFilters: [],
      includeData: true,
    })
  const dispatcher = await startDispatcher(config, sql, log)
  const shape = template(organization.id)
  const event = (): RequestEvent => ({
    ...shape,
    request_id: randomUUID(),
    completed_at: new Date(),
  })

  try {
    // 1. Throughput: events handed over as fast as the dispatcher records them.
    await hook('/fresh')
    const started = performance.now()
    const cpuBefore = process.cpuUsage()
    for (let sent = 0; sent < THROUGHPUT_EVENTS; sent += 500)
      await dispatcher.handler.handle(Array.from({ length: Math.min(500, THROUGHPUT_EVENTS - sent) }, event))
    let got = await waitFor(stats, '/fresh', THROUGHPUT_EVENTS, 120_000)
    const seconds = (performance.now() - started) / 1000
    const rate = THROUGHPUT_EVENTS / seconds
    const cpu = process.cpuUsage(cpuBefore)
    const cpuMicros = (cpu.user + cpu.system) / THROUGHPUT_EVENTS
    // The machine may be shared: measure the ceiling again right after, and compare with the mean.
    const after = await measureCeiling(`${base}/ceiling`)
    console.log(`ceiling again after the throughput run: ${after.rate.toFixed(0)}/s`)
    ceiling = (ceiling + after.rate) / 2
    console.log(
      `throughput: ${THROUGHPUT_EVENTS} deliveries in ${seconds.toFixed(1)} s = ${rate.toFixed(0)}/s ` +
        `(${((rate / ceiling) * 100).toFixed(0)}% of the mean ceiling); event-to-delivery p50 ${pct(got.latencies, 50)} ms, ` +
        `p99 ${pct(got.latencies, 99)} ms (queueing included); ${cpuMicros.toFixed(0)} µs CPU per delivery in ` +
        `the dispatcher process (Postgres not counted)`,
    )

    // 2. Latency at a steady 1,000 events/s for 5 s.
    const steady = await stream(dispatcher.handler.handle, event, 1_000, 5_000)
    got = await waitFor(stats, '/fresh', THROUGHPUT_EVENTS + steady, 60_000)
    console.log(`steady 1000/s: p50 ${pct(got.latencies, 50)} ms, p99 ${pct(got.latencies, 99)} ms`)

    // 3. A backlog of due retries drains while fresh events keep flowing.
    // Another organization, so the fresh events of this phase are not delivered to it as well.
    const other = await createApiKeyRepo(sql).createOrganization('bench-backlog')
    const { webhook: backlogHook } = await webhooks.create({
      organizationId: other.organization.id,
      destination: `${base}/backlog`,
      sampleRate: 100,
      propertyFilters: [],
      includeData: true,
    })
    const body = buildPayload(event(), true, 'request.completed')
    await sql`
      insert into webhook_deliveries (webhook_id, request_id, event, body, next_attempt_at, attempts, round_attempts)
      select ${backlogHook.id}, gen_random_uuid(), 'request.completed', ${body}, now() - interval '1 second', 1, 1
      from generate_series(1, ${BACKLOG})`
    const drainStarted = performance.now()
    let fresh = 0
    let drained = 0
    const latencies: number[] = []
    while (drained < BACKLOG && performance.now() - drainStarted < 240_000) {
      fresh += await stream(dispatcher.handler.handle, event, FRESH_RATE, 1_000)
      const s = await stats()
      drained = s.counts['/backlog'] ?? 0
      latencies.push(...s.latencies)
    }
    const drainSeconds = (performance.now() - drainStarted) / 1000
    got = await waitFor(stats, '/fresh', THROUGHPUT_EVENTS + steady + fresh, 30_000)
    latencies.push(...got.latencies)
    console.log(
      `backlog: ${drained}/${BACKLOG} due retries drained in ${drainSeconds.toFixed(1)} s ` +
        `(${(drained / drainSeconds).toFixed(0)}/s) while ${fresh} fresh events at ${FRESH_RATE}/s ` +
        `kept p50 ${pct(latencies, 50)} ms, p99 ${pct(latencies, 99)} ms`,
    )
    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')
    console.log(
      `targets: >= 2000 deliveries/s ${verdict(rate >= 2_000)}; >= 60% of ceiling ${verdict(rate >= 0.6 * ceiling)}; ` +
        `backlog drained with fresh p99 < 1 s ${verdict(drained >= BACKLOG && pct(latencies, 99) < 1_000)}`,
    )
  } finally {
    await dispatcher.stop()
    await sql.end()
    await db.drop()
    receiver.send({ cmd: 'exit' })
  }
}

async function measureCeiling(url: string): Promise<{ rate: number; cpuMicros: number }> {
  const agent = new Agent({ connections: CONNECTIONS, pipelining: 1 })
  const body = buildPayload(template(randomUUID()), true, 'request.completed')
  const keys = ['whsec_QmVuY2htYXJrIGtleSBvZiB0aGlydHktdHdvIGJ5dGVzIQ==']
  let done = 0
  const until = performance.now() + CEILING_SECONDS * 1000
  const loop = async () => {
    while (performance.now() < until) {
      const headers = signatureHeaders({
        id: randomUUID(),
        timestamp: Math.floor(Date.now() / 1000),
        body,
        keys,
      })
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        body,
        headers: { 'content-type': 'application/json', ...headers },
      })
      await res.body.dump()
      done++
    }
  }
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  await Promise.all(Array.from({ length: CONNECTIONS }, loop))
  const rate = done / ((performance.now() - started) / 1000)
  const cpu = process.cpuUsage(cpuBefore)
  await agent.close()
  return { rate, cpuMicros: (cpu.user + cpu.system) / done }
}

/** Hands over `rate` events per second in 20 ms batches for `ms`; returns how many. */
async function stream(
  handle: (events: RequestEvent[]) => Promise<void>,
  event: () => RequestEvent,
  rate: number,
  ms: number,
): Promise<number> {
  const perTick = Math.max(1, Math.round(rate / 50))
  const started = performance.now()
  let sent = 0
  for (let tick = 0; performance.now() - started < ms; tick++) {
    await handle(Array.from({ length: perTick }, event))
    sent += perTick
    const next = started + (tick + 1) * 20
    const wait = next - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  }
  return sent
}

async function waitFor(stats: () => Promise<Stats>, path: string, count: number, ms: number): Promise<Stats> {
  const deadline = performance.now() + ms
  const latencies: number[] = []
  for (;;) {
    const s = await stats()
    latencies.push(...s.latencies)
    if ((s.counts[path] ?? 0) >= count) return { counts: s.counts, latencies }
    if (performance.now() > deadline)
      throw new Error(`only ${s.counts[path] ?? 0} of ${count} deliveries to ${path}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}

/** DATABASE_URL's server, in a database of the bench's own (dropped at the end). */
function benchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const baseUrl = process.env.DATABASE_URL
  if (!baseUrl) throw new Error('bench:webhooks needs DATABASE_URL (a Postgres it may create a database on)')
  return createScratchDatabase(baseUrl, 'tally_bench_webhooks')
}

function template(organizationId: string): RequestEvent {
  return {
    request_id: randomUUID(),
    organization_id: organizationId,
    created_at: new Date(),
    completed_at: new Date(),
    latency_ms: 840,
    time_to_first_token_ms: 210,
    provider: 'openai',
    model: 'gpt-4o-mini',
    status: 200,
    target_url: 'https://api.openai.com/v1/chat/completions',
    prompt_tokens: 24,
    completion_tokens: 58,
    total_tokens: 82,
    cost_usd: 0.0000384,
    cached: false,
    user_id: 'user-42',
    session_id: 'session-7',
    session_name: 'Support chat',
    session_path: '/support',
    properties: { env: 'bench', team: 'search' },
    prompt_id: '',
    prompt_version_id: '',
    trace_id: '',
    span_id: '',
    parent_span_id: '',
    request_body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Summarise the last three tickets in two sentences.' }],
      temperature: 0.2,
    }),
    response_body: JSON.stringify({
      id: 'chatcmpl-1',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Two customers asked for refunds.' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 24, completion_tokens: 58, total_tokens: 82 },
    }),
  }
}
