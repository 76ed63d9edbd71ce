// npm run bench:otlp — spans/s accepted through OTLP/HTTP (POST /v1/traces, protobuf and JSON)
// beside POST /v1/request/log carrying the same model calls as Tally events. Tally runs in a child
// process (embedded engines, in-process event transport: a 2xx means written to ClickHouse), so
// the load generator does not share its event loop. Each case runs BENCH_SECONDS (default 20) of
// load (in 4 interleaved turns, after a warm-up) over BENCH_CONNECTIONS (8) connections,
// BENCH_BATCH (100) calls per POST. Loopback only.
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, toBinary, toJson } from '@bufbuild/protobuf'
import { Pool } from 'undici'
import { ExportTraceServiceRequestSchema } from '../generated/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const BATCH = Number(process.env.BENCH_BATCH ?? 100)
const ROUNDS = 4
const READY_TIMEOUT_MS = 180_000

/** The child: Tally on embedded engines with one organization's key; tells the parent its URL. */
async function serve() {
  const { startBenchTally } = await import('./tally.ts')
  const { url, key, shutdown } = await startBenchTally('bench otlp', {
    TALLY_DATA_DIR: process.env.BENCH_DATA_DIR as string,
  })
  process.send?.({ url, key })
  process.on('message', async () => {
    await shutdown.run('bench done')
    process.exit(0)
  })
}

/** One model call, ~2 KB of messages: what both intakes carry. */
function call(i: number) {
  const words = (n: number) => Array.from({ length: n }, (_, k) => `word${(i + k) % 97}`).join(' ')
  const start = Date.now() - 60_000 + (i % 1000)
  return {
    traceId: randomBytes(16),
    spanId: randomBytes(8),
    start,
    end: start + 200 + (i % 800),
    model: i % 3 ? 'gpt-4o-mini' : 'claude-3-5-haiku',
    input: [
      { role: 'system', content: words(60) },
      { role: 'user', content: words(90) },
    ],
    output: [{ role: 'assistant', content: words(70), finish_reason: 'stop' }],
    session: `session-${i % 200}`,
    user: `user-${i % 50}`,
  }
}

type Call = ReturnType<typeof call>

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')

/** The same call as a Tally event, with the request id the OTLP intake would derive being irrelevant: given explicitly. */
function asEvent(c: Call, id: string) {
  return {
    request_id: id,
    created_at: c.start,
    completed_at: c.end,
    model: c.model,
    user_id: c.user,
    session_id: c.session,
    prompt_tokens: 180,
    completion_tokens: 90,
    properties: { env: 'bench' },
    request: { model: c.model, messages: c.input },
    response: { model: c.model, messages: c.output },
    trace_id: hex(c.traceId),
    span_id: hex(c.spanId),
  }
}

const str = (value: string) => ({ value: { case: 'stringValue' as const, value } })
const int = (value: number) => ({ value: { case: 'intValue' as const, value: BigInt(value) } })

function asSpan(c: Call) {
  return {
    traceId: c.traceId,
    spanId: c.spanId,
    name: `chat ${c.model}`,
    kind: 3,
    startTimeUnixNano: BigInt(c.start) * 1_000_000n,
    endTimeUnixNano: BigInt(c.end) * 1_000_000n,
    attributes: [
      { key: 'gen_ai.operation.name', value: str('chat') },
      { key: 'gen_ai.request.model', value: str(c.model) },
      { key: 'gen_ai.usage.input_tokens', value: int(180) },
      { key: 'gen_ai.usage.output_tokens', value: int(90) },
      { key: 'gen_ai.conversation.id', value: str(c.session) },
      { key: 'user.id', value: str(c.user) },
      { key: 'tally.property.env', value: str('bench') },
      { key: 'gen_ai.input.messages', value: str(JSON.stringify(c.input)) },
      { key: 'gen_ai.output.messages', value: str(JSON.stringify(c.output)) },
    ],
  }
}

function exportOf(calls: Call[]) {
  return create(ExportTraceServiceRequestSchema, {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: str('bench') }] },
        scopeSpans: [{ scope: { name: 'bench' }, spans: calls.map(asSpan) }],
      },
    ],
  })
}

/** OTLP/JSON: as the JS exporter writes it (hex ids). */
function otlpJson(calls: Call[]): string {
  const json = toJson(ExportTraceServiceRequestSchema, exportOf(calls)) as {
    resourceSpans: { scopeSpans: { spans: { traceId: string; spanId: string }[] }[] }[]
  }
  for (const span of json.resourceSpans[0]?.scopeSpans[0]?.spans ?? []) {
    span.traceId = Buffer.from(span.traceId, 'base64').toString('hex')
    span.spanId = Buffer.from(span.spanId, 'base64').toString('hex')
  }
  return JSON.stringify(json)
}

interface Case {
  name: string
  path: string
  contentType: string
  body(batch: number): string | Buffer
}

async function measure() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-otlp-'))
  chmodSync(dataDir, 0o755)
  const child = fork(new URL(import.meta.url).pathname, ['--serve'], {
    env: { ...process.env, BENCH_DATA_DIR: dataDir },
  })
  const ready = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Tally did not start in time')), READY_TIMEOUT_MS)
    child.once('message', (m) => {
      clearTimeout(timer)
      resolve(m as { url: string; key: string })
    })
    child.once('exit', (code) => reject(new Error(`Tally exited (${code}) before it was ready`)))
  })
  const pool = new Pool(ready.url, { connections: CONNECTIONS, pipelining: 1 })
  try {
    await run(ready, pool)
  } finally {
    await pool.close()
    child.send('stop')
    await new Promise((resolve) => child.once('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function run(ready: { url: string; key: string }, pool: Pool) {
  // Fresh calls per batch: every span is a new request (ids derived from span ids never repeat).
  let n = 0
  const calls = () => Array.from({ length: BATCH }, () => call(n++))
  const cases: Case[] = [
    {
      name: 'POST /v1/request/log (JSON events)',
      path: '/v1/request/log',
      contentType: 'application/json',
      body: () => JSON.stringify({ events: calls().map((c) => asEvent(c, crypto.randomUUID())) }),
    },
    {
      name: 'POST /v1/traces (OTLP protobuf)',
      path: '/v1/traces',
      contentType: 'application/x-protobuf',
      body: () => Buffer.from(toBinary(ExportTraceServiceRequestSchema, exportOf(calls()))),
    },
    {
      name: 'POST /v1/traces (OTLP/JSON)',
      path: '/v1/traces',
      contentType: 'application/json',
      body: () => otlpJson(calls()),
    },
  ]

  const sample = cases.map((c) => Buffer.byteLength(c.body(1)) / BATCH)
  console.log(
    `bench:otlp — ${SECONDS} s per case, ${CONNECTIONS} connections, ${BATCH} calls per POST, load ${loadavg()[0]?.toFixed(2)}`,
  )
  // Each case runs in ROUNDS turns, interleaved (log, protobuf, JSON, log, …), after an unmeasured
  // warm-up of each: drift on a shared machine (merges, other load) then falls on all of them alike.
  const totals = cases.map(() => ({ accepted: 0, seconds: 0, latencies: [] as number[] }))
  const prepared = cases.map((c) => Array.from({ length: 64 }, () => c.body(BATCH)))
  const load = async (i: number, seconds: number, record: boolean) => {
    const c = cases[i] as Case
    const bodies = prepared[i] as (string | Buffer)[]
    const total = totals[i] as (typeof totals)[number]
    let failed = 0
    let next = 0
    const until = Date.now() + seconds * 1000
    const worker = async () => {
      while (Date.now() < until) {
        const body = bodies[next++ % bodies.length] as string | Buffer
        const t0 = performance.now()
        const res = await pool.request({
          method: 'POST',
          path: c.path,
          headers: { authorization: `Bearer ${ready.key}`, 'content-type': c.contentType },
          body,
        })
        await res.body.arrayBuffer()
        if (res.statusCode >= 300) failed++
        else if (record) {
          total.latencies.push(performance.now() - t0)
          total.accepted += BATCH
        }
      }
    }
    const t0 = Date.now()
    await Promise.all(Array.from({ length: CONNECTIONS }, worker))
    if (record) total.seconds += (Date.now() - t0) / 1000
    if (failed > 0) throw new Error(`${c.name}: ${failed} POSTs were not accepted`)
  }
  for (let i = 0; i < cases.length; i++) await load(i, 3, false)
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < cases.length; i++) await load(i, SECONDS / ROUNDS, true)
  }
  const results = cases.map((c, i) => {
    const t = totals[i] as (typeof totals)[number]
    t.latencies.sort((a, b) => a - b)
    return {
      name: c.name,
      perSecond: t.accepted / t.seconds,
      p99: t.latencies[Math.floor(t.latencies.length * 0.99)] ?? 0,
      bytes: sample[i] ?? 0,
    }
  })
  // The intake's own CPU per call, in this process: parse and validate (log) against decode and
  // map (OTLP), without HTTP, the event codec or ClickHouse, which both paths share.
  const { inputProblem } = await import('../services/api/http/inputs.ts')
  const { intakeEvent } = await import('../services/api/requests/intake.ts')
  const { decodeAndMap } = await import('../services/api/otlp/worker.ts')
  const decodeMap = (body: Uint8Array, encoding: 'protobuf' | 'json') =>
    decodeAndMap({ body, encoding, maxSpans: Number.POSITIVE_INFINITY, defaults: { properties: {} } })
  const events = intakeEvent.array()
  const steps: ((body: string | Buffer) => void)[] = [
    (body) => {
      const parsed = JSON.parse(body.toString()) as { events: unknown[] }
      if (inputProblem(parsed, 'body')) throw new Error('input rules refused a bench event')
      events.parse(parsed.events)
    },
    (body) => decodeMap(body as Buffer, 'protobuf'),
    (body) => decodeMap(Buffer.from(body as string), 'json'),
  ]
  const cpu = steps.map((step, i) => {
    const bodies = prepared[i] as (string | Buffer)[]
    let calls = 0
    const t0 = performance.now()
    while (performance.now() - t0 < 2_000) {
      step(bodies[calls % bodies.length] as string | Buffer)
      calls++
    }
    return ((performance.now() - t0) * 1000) / (calls * BATCH)
  })

  const base = results[0]?.perSecond ?? 1
  console.log(
    'case                                    calls/s   vs log   p99 POST   bytes/call   intake CPU/call',
  )
  for (const [i, r] of results.entries()) {
    console.log(
      `${r.name.padEnd(38)} ${r.perSecond.toFixed(0).padStart(8)}   ${(r.perSecond / base).toFixed(2).padStart(5)}×   ${r.p99.toFixed(0).padStart(5)} ms   ${r.bytes.toFixed(0).padStart(6)}       ${(cpu[i] ?? 0).toFixed(1).padStart(6)} µs`,
    )
  }
  console.log(`load average at the end: ${loadavg()[0]?.toFixed(2)}`)
}

if (process.argv[2] === '--serve') await serve()
else await measure()
