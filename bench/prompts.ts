// npm run bench:prompts — the SDKs' hot path, POST /v1/prompt-2025/query/production-version, warm,
// beside a trivial fastify route served by the same process as the ceiling. Loopback only; about
// 20 seconds plus start-up. The server runs in a child process so that it and the load generator
// do not share an event loop.
import { fork } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import Fastify from 'fastify'

const CONNECTIONS = 10
const SECONDS = 3
const ROUNDS = 3
const TARGET_SHARE = 0.5
const TARGET_P99_MS = 10

interface Target {
  tallyUrl: string
  ceilingUrl: string
  apiKey: string
  promptId: string
}

if (process.argv[2] === '--serve') await serve()
else await measure()

/** The child: Tally as `npm start` composes it, a prompt to look up, and the trivial route. */
async function serve() {
  const { startBenchTally } = await import('./tally.ts')
  const { freePort } = await import('../services/shared/net.ts')

  const dataDir = mkdtempSync(join(tmpdir(), 'tally-bench-'))
  // Embedded Postgres runs as the postgres system user when we are root: it must reach the dir.
  chmodSync(dataDir, 0o755)
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }))
  const started = await startBenchTally('bench', { PORT: String(await freePort()), TALLY_DATA_DIR: dataDir })
  const { key: secret, shutdown } = started

  const res = await fetch(`${started.url}/v1/prompt-2025`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: `bench-${Date.now()}`,
      tags: ['bench'],
      promptBody: {
        model: 'gpt-4o-mini',
        messages: [{ role: 'system', content: 'You answer questions about {{hc:topic:string}}.' }],
        temperature: 0.2,
      },
    }),
  })
  const created = (await res.json()) as { data: { id: string } }

  const ceiling = Fastify()
  ceiling.post('/ceiling', async () => ({ data: { ok: true }, error: null }))
  const ceilingUrl = await ceiling.listen({ port: 0, host: '127.0.0.1' })
  shutdown.add('ceiling', () => ceiling.close())

  const stop = async () => {
    await shutdown.run('bench finished')
    process.exit(0)
  }
  process.on('message', (m) => m === 'stop' && void stop())
  process.send?.({
    tallyUrl: started.url,
    ceilingUrl,
    apiKey: secret,
    promptId: created.data.id,
  } satisfies Target)
}

/** The parent: starts the child, warms the cache, measures the ceiling, then the look-up. */
async function measure() {
  const child = fork(new URL(import.meta.url).pathname, ['--serve'], { stdio: 'inherit' })
  const target = await new Promise<Target>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Target))
    child.once('exit', (code) => reject(new Error(`the bench server exited (${code}) before it was ready`)))
  })
  try {
    const headers = { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' }
    const body = JSON.stringify({ promptId: target.promptId })
    const lookup = { url: `${target.tallyUrl}/v1/prompt-2025/query/production-version`, headers, body }
    const ceiling = { url: `${target.ceilingUrl}/ceiling`, headers, body }

    await run(lookup, 1) // warm: the cache, the JIT, the connections
    await run(ceiling, 1)
    // Alternating rounds, so a neighbour's burst of work does not land on one route only.
    const rounds: { ceiling: Result; lookup: Result }[] = []
    for (let i = 0; i < ROUNDS; i++)
      rounds.push({ ceiling: await run(ceiling, SECONDS), lookup: await run(lookup, SECONDS) })

    const rows = [['round', 'route', 'requests/s', 'p50 ms', 'p99 ms', 'non-2xx']]
    rounds.forEach((r, i) => {
      rows.push([String(i + 1), 'trivial fastify route (ceiling)', ...figures(r.ceiling)])
      rows.push([String(i + 1), 'POST /v1/prompt-2025/query/production-version (warm)', ...figures(r.lookup)])
    })
    const ceilingMedian = medianOf(rounds.map((r) => r.ceiling))
    const lookupMedian = medianOf(rounds.map((r) => r.lookup))
    rows.push(['median', 'trivial fastify route (ceiling)', ...figures(ceilingMedian)])
    rows.push(['median', 'POST /v1/prompt-2025/query/production-version (warm)', ...figures(lookupMedian)])
    const width = rows
      .map((r) => r.map((c) => c.length))
      .reduce((a, b) => a.map((w, i) => Math.max(w, b[i] ?? 0)))
    console.log(
      `\nbench:prompts — ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS}s per route, loopback; ` +
        `${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(1)} (figures from a busy machine say little)\n`,
    )
    for (const row of rows)
      console.log(row.map((c, i) => (i < 2 ? c.padEnd(width[i] ?? 0) : c.padStart(width[i] ?? 0))).join('  '))
    const share = lookupMedian.rps / ceilingMedian.rps
    const shareOk = share >= TARGET_SHARE
    const p99Ok = lookupMedian.p99 < TARGET_P99_MS
    console.log(
      `\nmedian look-up throughput is ${(share * 100).toFixed(0)}% of the ceiling (target ≥ ${TARGET_SHARE * 100}%: ${shareOk ? 'met' : 'MISSED'}); ` +
        `median p99 ${lookupMedian.p99} ms (target < ${TARGET_P99_MS} ms: ${p99Ok ? 'met' : 'MISSED'})`,
    )
    if (rounds.some((r) => r.lookup.non2xx > 0 || r.ceiling.non2xx > 0)) {
      console.error('some answers were not 2xx: the figures are not valid')
      process.exitCode = 1
    }
  } finally {
    child.send('stop')
    await new Promise((resolve) => child.once('exit', resolve))
  }
}

interface Result {
  rps: number
  p50: number
  p99: number
  non2xx: number
}

async function run(target: { url: string; headers: Record<string, string>; body: string }, seconds: number) {
  const r = await autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    duration: seconds,
  })
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors,
  } satisfies Result
}

/** Each figure's median over the rounds (the rounds are few and odd in number). */
function medianOf(results: Result[]): Result {
  const median = (pick: (r: Result) => number) => {
    const sorted = results.map(pick).sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)] ?? 0
  }
  return {
    rps: median((r) => r.rps),
    p50: median((r) => r.p50),
    p99: median((r) => r.p99),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
  }
}

function figures(r: Result): string[] {
  return [r.rps.toFixed(0), String(r.p50), String(r.p99), String(r.non2xx)]
}
