/**
 * The ClickHouse shards of `up.sh --cluster` (run by clickhouse.sh, never by hand):
 *
 *   node infra/local/clickhouse-shards.ts RUNDIR CLUSTER HTTP_PORT:TCP_PORT HTTP_PORT:TCP_PORT…
 *
 * One server per port pair, from the libchdb `npm start` runs (startClickHouseServer with its
 * `cluster` option, as the tests start theirs): shard 01, 02, … of CLUSTER, data in RUNDIR/nodeNN,
 * one secrets directory (the same users and passwords on every node). Once all answer, it writes
 * RUNDIR/endpoints and RUNDIR/env, Tally's variables for this cluster (mode 0600: the URLs carry
 * passwords), and logs one line. It then stays in the foreground as the servers' owner: SIGTERM or
 * SIGINT stops every shard cleanly and exits 0; a shard that ends unasked ends the others and this
 * process (exit 1), so that clickhouse.sh status tells the truth. Exit 2: a port was taken meanwhile
 * (clickhouse.sh retries with others). Killed outright, its servers stop on their own (their pipe
 * to it closes: child.ts).
 */
import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loopbackShards } from '../../services/shared/clickhouse-server/config.ts'
import type { ContainmentMode } from '../../services/shared/clickhouse-server/containment.ts'
import type { ClickHouseServer } from '../../services/shared/clickhouse-server/handle.ts'
import { startClickHouseServer } from '../../services/shared/clickhouse-server/server.ts'

const [runDir, cluster, ...pairs] = process.argv.slice(2)
if (!runDir || !cluster || pairs.length === 0 || !pairs.every((p) => /^\d+:\d+$/.test(p))) {
  console.error('usage: clickhouse-shards.ts RUNDIR CLUSTER HTTP_PORT:TCP_PORT…')
  process.exit(64)
}
const ports = pairs.map((p) => p.split(':').map(Number) as [number, number])
const deadlineMs = Number(process.env.TALLY_INFRA_START_TIMEOUT ?? 90) * 1000
const containment = (process.env.TALLY_CLICKHOUSE_CONTAINMENT ?? 'auto') as ContainmentMode

const line = (level: string, msg: string, obj: object) =>
  console.log(JSON.stringify({ time: new Date().toISOString(), level, msg, ...obj }))
const log = {
  info: (obj: object, msg: string) => line('info', msg, obj),
  warn: (obj: object, msg: string) => line('warn', msg, obj),
  error: (obj: object, msg: string) => line('error', msg, obj),
}

const servers: ClickHouseServer[] = []
let stopping = false

async function stopAll(code: number, reason: string): Promise<never> {
  if (!stopping) {
    stopping = true
    line('info', 'clickhouse_shards_stopping', { reason })
    await Promise.allSettled(servers.map((s) => s.stop()))
  }
  process.exit(code)
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stopAll(0, signal))

const nodes = loopbackShards(
  cluster,
  ports.map(([, tcp]) => tcp),
)
const started = await Promise.allSettled(
  nodes.map((node, i) =>
    startClickHouseServer({
      dataDir: join(runDir, `node${node.macros.shard}`),
      secretsDir: join(runDir, 'secrets'),
      containment,
      httpPort: (ports[i] as [number, number])[0],
      cluster: node,
      deadlineMs,
      log,
    }),
  ),
)
for (const s of started) if (s.status === 'fulfilled') servers.push(s.value)
const failed = started.flatMap((s) => (s.status === 'rejected' ? [(s.reason as Error).message] : []))
if (failed.length > 0) {
  for (const message of failed) line('error', 'clickhouse_shard_failed', { message })
  await stopAll(failed.some((m) => /Address already in use|EADDRINUSE/.test(m)) ? 2 : 1, 'start failed')
}
for (const [i, server] of servers.entries())
  server.onExit(
    (exit) => void stopAll(1, `shard ${i + 1} (pid ${server.pid}) ended: ${JSON.stringify(exit)}`),
  )

const urls = servers.map((s) => s.url)
const env = [
  `export CLICKHOUSE_URL=${urls[0]}`,
  `export CLICKHOUSE_SQL_URL=${servers[0]?.sqlUrl}`,
  `export TALLY_CLICKHOUSE_CLUSTER=${cluster}`,
  `export TALLY_CLICKHOUSE_CLUSTER_NODES=${urls.join(',')}`,
]
const endpoints = servers.map((s) => s.endpoint).join(',')
writeAtomically(join(runDir, 'endpoints'), `${endpoints}\n`)
// Last: its presence is what clickhouse.sh waits for.
writeAtomically(join(runDir, 'env'), `${env.join('\n')}\n`)
line('info', 'clickhouse_shards_ready', { cluster, endpoints, containment: servers[0]?.containment })

function writeAtomically(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 })
  renameSync(`${file}.tmp`, file)
}
// The handles keep nothing alive by themselves (their owner's exit stops the servers): this does.
setInterval(() => {}, 3_600_000)
