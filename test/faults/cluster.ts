import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createClient } from '@clickhouse/client'
import postgres from 'postgres'
import { createApiKeyRepo } from '../../services/api/keys/repo.ts'
import type { ClickHouseServer } from '../../services/shared/clickhouse-server/handle.ts'
import { startClickHouseServer } from '../../services/shared/clickhouse-server/server.ts'
import { freePort } from '../../services/shared/net.ts'
import { clickhouseEnv, engines } from '../support/harness.ts'
import { type OwnBroker, type OwnKafkaCluster, ownBroker, ownKafkaCluster } from '../support/kafka-broker.ts'
import {
  cleanUpProcesses,
  freshDataDir,
  spawnTally,
  stopTally,
  type TallyProcess,
} from '../support/processes.ts'
import { createScratchDatabase } from '../support/scratch-database.ts'
import { waitFor } from '../support/wait.ts'
import {
  type Certificates,
  makeCertificates,
  type Receiver,
  startReceiver,
} from '../webhooks/support/receiver.ts'

export type Role = 'api' | 'ingest' | 'dispatcher' | 'exporter'
const ENTRY: Record<Role, string> = {
  api: 'services/api/main.ts',
  ingest: 'services/ingest/main.ts',
  dispatcher: 'services/dispatcher/main.ts',
  exporter: 'services/exporter/main.ts',
}
/** One process of the cluster: the first of a role is named by the role, the next `api#1`, …. */
export type Member = Role | `${Role}#${number}`
const roleOf = (member: Member): Role => member.split('#')[0] as Role

export interface Org {
  organizationId: string
  headers: { authorization: string }
}

/**
 * The Kafka a cluster runs on: `single`, one broker (replication factor 1); `three-brokers`,
 * three KRaft nodes (replication factor 3, min.insync.replicas 2).
 */
type KafkaKind = 'single' | 'three-brokers'

/** The test's own Kafka: its nodes (one for `single`), each killed, frozen and started alone. */
interface OwnKafka {
  brokers: string
  nodes: OwnKafkaCluster['nodes'][number][]
  remove(): Promise<void>
}

async function startKafka(kind: KafkaKind): Promise<{ kafka: OwnKafka; broker: OwnBroker | undefined }> {
  if (kind === 'three-brokers') {
    const cluster = await ownKafkaCluster(3)
    await cluster.start().catch(async (err: unknown) => {
      await cluster.remove()
      throw err
    })
    return { kafka: cluster, broker: undefined }
  }
  const broker = await ownBroker()
  await broker.start().catch(async (err: unknown) => {
    await broker.remove()
    throw err
  })
  return { kafka: { brokers: broker.brokers, nodes: [broker], remove: () => broker.remove() }, broker }
}

const CLUSTER_NAME = 'tally_faults'

/** Restarts of a shard that exited unasked within one test (watch in startShards). */
const MAX_ENGINE_RESTARTS = 3

/**
 * What a ClickHouse server that died said last (it logs warnings and worse): the first lines of a
 * crash report, and the errors just before it.
 */
function lastErrors(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').split('\n')
    // A crash's report opens a block of Fatal lines (the signal, the query, then the stack): its
    // first lines and the errors just before them say what happened.
    const fatal = lines.findIndex((l) => l.includes('<Fatal>'))
    const before = (fatal < 0 ? lines : lines.slice(0, fatal)).filter((l) => /<(Error|Critical)>/.test(l))
    const report = fatal < 0 ? [] : lines.slice(fatal, fatal + 12)
    return ([...before.slice(-4), ...report].join(' | ') || '(none)').slice(0, 6_000)
  } catch (err) {
    return `(unreadable: ${(err as Error).message})`
  }
}

/** Two ClickHouse servers from the embedded libchdb, one shard each (no replication: see docs/operations.md). */
async function startShards() {
  const dir = freshDataDir('tally-shards-')
  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()])
  const secret = randomBytes(24).toString('base64url')
  const nodes = [
    { httpPort: ports[0] as number, tcpPort: ports[1] as number, shard: '01' },
    { httpPort: ports[2] as number, tcpPort: ports[3] as number, shard: '02' },
  ]
  const quiet = { info() {}, warn() {}, error() {} }
  const options = (i: number) => {
    const node = nodes[i] as (typeof nodes)[number]
    return {
      dataDir: join(dir, `node${node.shard}`),
      // One secrets directory: the same users on both.
      secretsDir: join(dir, 'secrets'),
      containment: process.env.CI === 'true' ? ('required' as const) : ('auto' as const),
      httpPort: node.httpPort,
      cluster: {
        tcpPort: node.tcpPort,
        name: CLUSTER_NAME,
        secret,
        shards: nodes.map((n) => ({ host: '127.0.0.1', tcpPort: n.tcpPort })),
        macros: { shard: node.shard, replica: 'r1' },
      },
      log: quiet,
    }
  }
  /** What happened to each server the test did not stop itself: its exits, for a failed wait. */
  const exits: string[] = []
  /**
   * A shard that exits unasked is started again, as its supervisor would, at most
   * MAX_ENGINE_RESTARTS times, each said at once and kept for the report. The embedded engine
   * (libchdb) ends the whole server when a peer resets a native-protocol connection it is reading
   * ("Terminate called for uncaught exception: … Connection reset by peer" in TCPHandler), which
   * the initiator does when it cancels a distributed query or insert: a crash of the engine's own,
   * that clickhouse-server does not have, and one more fault that Tally must come through.
   */
  const restarts: string[] = []
  let removed = false
  const watch = (server: ClickHouseServer, i: number) => {
    server.onExit((exit) => {
      if (servers[i] !== server) return
      const said = lastErrors(join(options(i).dataDir, 'clickhouse-server.log'))
      exits.push(
        `shard ${i + 1} (pid ${server.pid}) exited: code ${exit.code} signal ${exit.signal}; ${exit.stderr.slice(-1_500)}` +
          `; its log's last errors: ${said}`,
      )
      servers[i] = undefined
      if (restarts.length >= MAX_ENGINE_RESTARTS) return
      // The report's message is on the line after its opening one: the log's prefixes left out.
      const cause =
        /uncaught exception:[\s|]*(?:\S+ \S+ \[ \d+ \] \{[^}]*\} <Fatal> \w+: )?([^|]+)/
          .exec(said)?.[1]
          ?.trim() ?? `signal ${exit.signal}`
      restarts.push(`shard ${i + 1}: ${cause.slice(0, 200)}`)
      console.log(
        `[fault] shard ${i + 1} exited unasked (${cause.slice(0, 200)}); started again as a supervisor would`,
      )
      void startClickHouseServer(options(i)).then(
        (again) => {
          if (removed) return void again.stop()
          servers[i] = again
          watch(again, i)
        },
        (err: Error) => exits.push(`shard ${i + 1} could not be started again: ${err.message}`),
      )
    })
    return server
  }
  const servers: (ClickHouseServer | undefined)[] = await Promise.all(
    nodes.map((_, i) => startClickHouseServer(options(i))),
  )
  for (const [i, server] of servers.entries()) if (server) watch(server, i)
  const server = (i: number) => {
    const s = servers[i]
    if (!s) throw new Error(`shard ${i + 1} is stopped`)
    return s
  }
  return {
    /** The first node: Tally's CLICKHOUSE_URL; the second is reached through it (and migrated by URL). */
    env: {
      CLICKHOUSE_URL: server(0).url,
      CLICKHOUSE_SQL_URL: server(0).sqlUrl,
      TALLY_CLICKHOUSE_CLUSTER: CLUSTER_NAME,
      TALLY_CLICKHOUSE_CLUSTER_NODES: `${server(0).url},${server(1).url}`,
    },
    /** The shards started again after exiting unasked (see watch), with what the engine said. */
    restarts: () => [...restarts],
    /** Stops shard `i` (0 or 1), on its data; `start` brings it back on the same ports. */
    async stop(i: number) {
      // Forgotten first: its exit is asked for, not one to report or restart.
      const stopping = server(i)
      servers[i] = undefined
      await stopping.stop()
    },
    async start(i: number) {
      const server = await startClickHouseServer(options(i))
      servers[i] = server
      watch(server, i)
    },
    /** Each shard: whether it answers, and any exit the test did not cause. */
    async describe(): Promise<string> {
      const states = await Promise.all(
        servers.map(async (server, i) => {
          if (!server) return `shard ${i + 1}: stopped by the test`
          const ping = await fetch(`http://127.0.0.1:${nodes[i]?.httpPort}/ping`, {
            signal: AbortSignal.timeout(2_000),
          }).then(
            (r) => `${r.status}`,
            (err: Error) => err.message,
          )
          return `shard ${i + 1} (pid ${server.pid}, attached ${server.attached}): /ping ${ping}`
        }),
      )
      return [...states, ...exits].join('; ')
    },
    async remove() {
      removed = true
      const running = servers.splice(0, servers.length, undefined, undefined)
      await Promise.all(running.map((s) => s?.stop()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface ClusterOptions {
  kafka?: KafkaKind
  /** Processes per role (2: `api` and `api#1`, …). */
  replicas?: number
  /** The exporter role as well (with the test run's S3). */
  exporter?: boolean
  /** Two ClickHouse shards of the test's own instead of the test run's server. */
  shards?: boolean
}

/**
 * Tally as production runs it, for the fault suite: api, ingest and dispatcher as processes of
 * their own, on a Kafka of the test's own (`options.kafka`: one broker by default, or three
 * nodes; killed, frozen and started again), the test run's Postgres (a database of its own) and
 * ClickHouse (a database of its own), and an HTTPS webhook receiver. Each consumer process has a
 * static instance id, as a StatefulSet gives.
 */
export async function startCluster(env: Record<string, string> = {}, options: ClusterOptions = {}) {
  const { kafka, broker: single } = await startKafka(options.kafka ?? 'single')
  const shards = options.shards
    ? await startShards().catch(async (err: unknown) => {
        await kafka.remove()
        throw err
      })
    : undefined
  // A set-up that fails from here on leaves no broker behind (a JVM outliving the test run).
  const database = await createScratchDatabase(engines().postgresUrl, 'tally_faults').catch(
    async (err: unknown) => {
      await kafka.remove()
      await shards?.remove()
      throw err
    },
  )
  const certs: Certificates = makeCertificates()
  const receiver: Receiver = await startReceiver(certs)
  const run = randomUUID().slice(0, 8)
  const roles: Role[] = ['api', 'ingest', 'dispatcher', ...(options.exporter ? (['exporter'] as const) : [])]
  const members: Member[] = roles.flatMap((role) => [
    role,
    ...Array.from({ length: (options.replicas ?? 1) - 1 }, (_, i) => `${role}#${i + 1}` as Member),
  ])
  const ports = {} as Record<Member, number>
  for (const m of members) ports[m] = await freePort()
  const ch = shards ? { ...shards.env } : clickhouseEnv()
  const s3 = engines().s3
  const common: Record<string, string> = {
    ...ch,
    CLICKHOUSE_DATABASE: `faults_${run}`,
    DATABASE_URL: database.url,
    KAFKA_BROKERS: kafka.brokers,
    TALLY_REQUEST_TOPIC: `tally.faults.${run}`,
    TALLY_DLQ_TOPIC: `tally.faults.${run}.dlq`,
    TALLY_TOPIC_PARTITIONS: '4',
    TALLY_CONSUMER_GROUP_PREFIX: `faults-${run}.`,
    TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    TALLY_WEBHOOK_CA_FILE: certs.caFile,
    TALLY_WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s,10s',
    TALLY_LOG_LEVEL: process.env.TALLY_FAULTS_LOG_LEVEL ?? 'warn',
    // Exports are written where every process reads them: the run's S3 (the exporter's files,
    // the API's links).
    ...(options.exporter && s3
      ? {
          S3_ENDPOINT: s3.endpoint,
          S3_BUCKET: s3.bucket,
          S3_REGION: s3.region,
          S3_ACCESS_KEY_ID: s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        }
      : {}),
    ...env,
  }
  const dirs = new Map(members.map((m) => [m, freshDataDir()]))
  const envOf = (member: Member): Record<string, string> => ({
    ...common,
    TALLY_DATA_DIR: dirs.get(member) as string,
    ...(roleOf(member) === 'api'
      ? { PORT: String(ports[member]) }
      : {
          TALLY_METRICS_PORT: String(ports[member]),
          TALLY_CONSUMER_INSTANCE_ID: `${roleOf(member)}-${member.split('#')[1] ?? 0}`,
        }),
  })
  const processes = {} as Record<Member, TallyProcess>
  const start = async (role: Member) => {
    const p = spawnTally(ENTRY[roleOf(role)], envOf(role))
    processes[role] = p
    // Its port answers once everything in it started (whatever the log level says).
    await waitFor(
      async () => {
        if (p.child.exitCode !== null)
          throw new Error(`the ${role} process exited ${p.child.exitCode}:\n${p.output()}`)
        return (await fetch(`http://127.0.0.1:${ports[role]}/livez`).catch(() => undefined))?.ok
      },
      {
        what: () => `the ${role} process started; its output:\n${p.output()}`,
        timeoutMs: 120_000,
        intervalMs: 100,
      },
    )
    return p
  }
  // The API first: it applies the migrations the others would otherwise race on. A start that
  // fails leaves nothing behind: the processes, the broker and the database go with it.
  try {
    await start('api')
    await Promise.all(members.filter((m) => m !== 'api').map(start))
  } catch (err) {
    await cleanUpProcesses()
    await kafka.remove()
    await shards?.remove()
    await receiver.close()
    await database.drop()
    certs.remove()
    throw err
  }

  const sql = postgres(database.url, { onnotice: () => {}, max: 2 })
  const keys = createApiKeyRepo(sql)
  const clickhouse = createClient({
    url: ch.CLICKHOUSE_URL as string,
    database: common.CLICKHOUSE_DATABASE,
    request_timeout: 60_000,
  })
  const api = `http://127.0.0.1:${ports.api}`
  const portOf = (role: Member) => ports[role]

  return {
    api,
    /** The single broker (`kafka: 'single'`); use `kafka.nodes` on three. */
    get broker(): OwnBroker {
      if (!single) throw new Error('this cluster runs on three Kafka nodes: use kafka.nodes')
      return single
    },
    kafka,
    /** The two ClickHouse shards (`shards: true`), each stopped and started alone. */
    get shards() {
      if (!shards) throw new Error("this cluster runs on the test run's ClickHouse: ask for shards")
      return shards
    },
    /** Every process of the cluster, by name. */
    members,
    /** KAFKA_BROKERS, CLICKHOUSE_DATABASE, the topics and the rest every role runs with. */
    env: common,
    receiver,
    processes,
    start,
    portOf,
    /**
     * Throws, with its output, when a role's process ended by itself (a test's kill -9 is a
     * signal, not an exit): a wait for it would otherwise time out and say only what it awaited.
     */
    assertNoneExited() {
      for (const [role, p] of Object.entries(processes)) {
        if (p.child.exitCode !== null)
          throw new Error(
            `the ${role} process exited ${p.child.exitCode}; its output:\n${p.output().slice(-6_000)}`,
          )
      }
    },
    async newOrg(): Promise<Org> {
      const { organization, secret } = await keys.createOrganization(`faults-${randomUUID().slice(0, 8)}`)
      return { organizationId: organization.id, headers: { authorization: `Bearer ${secret}` } }
    },
    /**
     * A webhook of `org` to a fresh path of the receiver; the path tells its deliveries apart.
     * `viaName`: to https://localhost:…, another destination (origin) than https://127.0.0.1:…,
     * as two tenants' receivers are.
     */
    async webhook(org: Org, includeData: boolean, viaName = false): Promise<{ id: string; path: string }> {
      const path = `/${randomUUID()}`
      const base = viaName ? receiver.localhostUrl : receiver.url
      const res = await fetch(`${api}/v1/webhooks`, {
        method: 'POST',
        headers: { ...org.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ destination: `${base}${path}`, includeData }),
      })
      const body = (await res.json()) as { data: { id: string } | null; error: string | null }
      if (res.status !== 201 || !body.data)
        throw new Error(`webhook not created: ${res.status} ${body.error}`)
      return { id: body.data.id, path }
    },
    /** The delivery rows of `requestIds` in Postgres, for a test that waits for them in vain. */
    async deliveries(requestIds: string[]) {
      return sql<
        {
          request_id: string
          status: string
          attempts: number
          next_attempt_at: Date | null
          claimed: boolean
          last_error: string | null
          last_response_status: number | null
          created_at: Date
        }[]
      >`select request_id::text, status, attempts, next_attempt_at, claim_token is not null as claimed,
               last_error, last_response_status, created_at
        from webhook_deliveries where request_id = any(${requestIds}::uuid[])`
    },
    /** Request ids the receiver got at `path` (a redelivered webhook counts once). */
    deliveredAt(path: string): Set<string> {
      return new Set(receiver.to(path).map(requestIdOf))
    },
    /** When the receiver first got each request id at `path`, in ms since the epoch. */
    arrivals(path: string): Map<string, number> {
      const first = new Map<string, number>()
      for (const r of receiver.to(path)) {
        const id = requestIdOf(r)
        if (!first.has(id)) first.set(id, r.at)
      }
      return first
    },
    /** How many rows of each request id of `org` a query sees (FINAL, as every Tally read). */
    async storedCounts(organizationId: string): Promise<Map<string, number>> {
      const rs = await clickhouse.query({
        query: `SELECT toString(request_id) AS id, count() AS n FROM request_response_rmt FINAL
                WHERE organization_id = {org:UUID} GROUP BY id`,
        query_params: { org: organizationId },
        format: 'JSONEachRow',
      })
      return new Map((await rs.json<{ id: string; n: number }>()).map((r) => [r.id, Number(r.n)]))
    },
    /** When each request id of `org` became queryable (ingested_at), in ms since the epoch. */
    async ingestedAt(organizationId: string): Promise<Map<string, number>> {
      const rs = await clickhouse.query({
        query: `SELECT toString(request_id) AS id, toUnixTimestamp64Milli(min(ingested_at)) AS at
                FROM request_response_rmt WHERE organization_id = {org:UUID} GROUP BY id`,
        query_params: { org: organizationId },
        format: 'JSONEachRow',
      })
      return new Map((await rs.json<{ id: string; at: number }>()).map((r) => [r.id, Number(r.at)]))
    },
    /** `/readyz` of a role: its status, or 0 when the process does not answer. */
    async ready(role: Member): Promise<number> {
      return (await this.readiness(role)).status
    },
    /** `/readyz` of a role: its status (0 when the process does not answer) and what it said. */
    async readiness(role: Member): Promise<{ status: number; body: string }> {
      try {
        const res = await fetch(`http://127.0.0.1:${ports[role]}/readyz`, {
          signal: AbortSignal.timeout(5_000),
        })
        return { status: res.status, body: await res.text() }
      } catch (err) {
        return { status: 0, body: (err as Error).message }
      }
    },
    /** Every process's `/readyz`: the statuses, and a line per process saying it. */
    async readinessReport(): Promise<{ statuses: number[]; text: string }> {
      const states = await Promise.all(members.map((r) => this.readiness(r)))
      return {
        statuses: states.map((s) => s.status),
        text: members.map((r, i) => `${r}: ${states[i]?.status} ${states[i]?.body.slice(0, 500)}`).join('\n'),
      }
    },
    /**
     * A process's warnings and errors counted by log message, and its lines about dead letters
     * and membership restarts: what a wait that timed out should show of it.
     */
    warnings(member: Member): string {
      const lines = (processes[member]?.output() ?? '').split('\n')
      const byMessage: Record<string, number> = {}
      for (const line of lines.filter((l) => /"level":(40|50|60)/.test(l))) {
        const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 80)
        byMessage[msg] = (byMessage[msg] ?? 0) + 1
      }
      const notable = lines
        .filter((l) => /dead_lettered|_stalled|restarting/.test(l))
        .slice(0, 10)
        .map((l) => l.slice(0, 700))
      return [`--- ${member}'s warnings, by message: ${JSON.stringify(byMessage)}`, ...notable].join('\n')
    },
    /** Waits until every role answers `/readyz` with `status`; resolves with how long it took. */
    async allReady(status: 200 | 503, timeoutMs: number): Promise<number> {
      const from = Date.now()
      let last = ''
      await waitFor(
        async () => {
          this.assertNoneExited()
          const report = await this.readinessReport()
          last = report.text
          return report.statuses.every((s) => s === status)
        },
        {
          what: () =>
            `every role's /readyz ${status}; last answers:\n${last}\n` +
            members.map((r) => `--- ${r}'s last output:\n${processes[r]?.output().slice(-3_000)}`).join('\n'),
          timeoutMs,
          intervalMs: 250,
        },
      )
      return Date.now() - from
    },
    async stop() {
      // A broker a failed test left frozen must answer its SIGTERM.
      for (const node of kafka.nodes) node.thaw()
      await Promise.all(
        Object.values(processes).map((p) => (p.child.exitCode === null ? stopTally(p) : Promise.resolve(0))),
      )
      await kafka.remove()
      // Whatever did not stop on SIGTERM is killed, and the data directories removed.
      await cleanUpProcesses()
      await shards?.remove()
      await clickhouse
        .command({ query: `DROP DATABASE IF EXISTS ${common.CLICKHOUSE_DATABASE}` })
        .catch(() => {})
      await clickhouse.close()
      await sql.end()
      await receiver.close()
      await database.drop()
      certs.remove()
    },
  }
}

export type Cluster = Awaited<ReturnType<typeof startCluster>>

/** The request id a delivery is about, read once per delivery (bodies can be megabytes). */
const requestIds = new WeakMap<object, string>()
function requestIdOf(received: { body: Buffer }): string {
  let id = requestIds.get(received)
  if (id === undefined) {
    id = (JSON.parse(received.body.toString()) as { metadata: { requestId: string } }).metadata.requestId
    requestIds.set(received, id)
  }
  return id
}

/** Resident memory of a process in MB, from /proc; 0 once it is gone. */
function rssMb(pid: number | undefined): number {
  if (!pid) return 0
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb ? Number(kb) / 1024 : 0
  } catch {
    return 0
  }
}

/** The highest RSS of each role's process while it runs, sampled every 250 ms until stopped. */
export function watchRss(cluster: Cluster) {
  const peak = Object.fromEntries(cluster.members.map((m) => [m, 0])) as Record<Member, number>
  const timer = setInterval(() => {
    for (const m of cluster.members) peak[m] = Math.max(peak[m] ?? 0, rssMb(cluster.processes[m]?.child.pid))
  }, 250)
  return {
    peak,
    stop: () => clearInterval(timer),
  }
}
