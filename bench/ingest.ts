// npm run bench:ingest — the distributed intake path on this machine: HTTP intake → real Kafka
// (acks=all) → consumer group tally-ingest → embedded ClickHouse server, with ~2 KB events.
// Prints events/s accepted at the API, events/s written to ClickHouse, p50/p99 from acceptance
// (the 201) to queryable, and, in the same run, raw client.insert rows/s of the same rows as the
// ceiling. Loopback only. Runs BENCH_SECONDS (default 60) of load; `-- --soak` (or
// BENCH_SECONDS=300) for the 5-minute RSS soak. Uses KAFKA_BROKERS when set, otherwise starts
// infra/local's Kafka for the run and stops it after. DATABASE_URL is used when set (else
// embedded Postgres). Tally runs in a child process so it does not share the load generator's
// event loop; `-- --split` runs the API and ingest roles in two processes instead.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { quantile, runLoad, startChild, withKafka } from './ingest-pipeline.ts'
import { descendantPids, portOwner } from './processes.ts'

const SOAK = process.argv.includes('--soak')
// API and ingest in two processes, as the distributed deployment runs them, on one data directory:
// the first starts the embedded ClickHouse server, the other attaches to it.
const SPLIT = process.argv.includes('--split') || process.env.BENCH_SPLIT === '1'
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SOAK ? 300 : 60))
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8)
const BATCH = Number(process.env.BENCH_BATCH ?? 100)
// Offered load in events/s (the POSTs are paced to it); unset: as fast as the API accepts.
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined
const CEILING_ROWS = Number(process.env.BENCH_CEILING_ROWS ?? 200_000)
const TARGET_RATE = 10_000
const TARGET_SHARE = 0.5
const TARGET_P99_MS = 2_000

await withKafka(drive)

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

    const { ceiling, json, avro, bytes } = await ask<{
      ceiling: number
      json: number
      avro: number
      bytes: number
    }>({ cmd: 'ceiling', rows: CEILING_ROWS })
    console.log(
      `raw insert ceiling: ${Math.round(ceiling)} rows/s, the higher of JSONCompactEachRow ${Math.round(json)} and Avro ${Math.round(avro)} (${CEILING_ROWS} rows of ~${bytes} B as JSON, 5,000 per insert)`,
    )

    const rss: number[] = [await rssAll()]
    const sampler = setInterval(async () => rss.push(await rssAll()), 10_000)
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
    const result = await runLoad({
      url,
      apiKey,
      org,
      ask,
      seconds: SECONDS,
      connections: CONNECTIONS,
      batch: BATCH,
      rate: RATE,
      cpuProcesses,
    })
    const { accepted, failed, written, writtenAtEnd, loadSeconds, allWrittenSeconds, latencies } = result
    const cpuUsed = result.cpu
    clearInterval(sampler)
    rss.push(await rssAll())
    const inserts = await ask<{ inserts: number; rows: number }>({ cmd: 'inserts' })

    const pct = (q: number) => quantile(latencies, q)
    const acceptedRate = accepted / loadSeconds
    const writtenRate = written / allWrittenSeconds
    const mb = (b: number) => `${Math.round(b / 1024 / 1024)} MB`
    // Stable: the last third of the readings averages within 10% of the first third (after start-up).
    const third = Math.max(1, Math.floor(rss.length / 3))
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length
    const rssGrowth = mean(rss.slice(-third)) / mean(rss.slice(1, 1 + third)) - 1
    console.log(
      [
        `load: ${SECONDS}s, ${RATE ? `paced to ${RATE} events/s` : 'unpaced'}, ${CONNECTIONS} connections, ${BATCH} events per POST (~${result.eventBytes} B per event on the wire); ${failed} failed POSTs`,
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
