/**
 * `infra/local/up.sh --cluster` for real, in a directory of its own: ZooKeeper answers `srvr`, the
 * two ClickHouse shards form a cluster a Distributed table writes and reads through, Kafka has three
 * brokers with Tally's topics replicated three times, and the env file it writes is a configuration
 * Tally accepts. Then `down.sh` leaves nothing listening. Needs java and mvn: without them it is
 * skipped, loudly, except in CI, where it fails.
 */
import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ConfigResourceTypes, ProduceAcks, Producer, stringSerializers } from '@platformatic/kafka'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../services/shared/config.ts'
import { kafkaConnection } from '../../services/shared/events/kafka-connection.ts'
import { ensureTopics, withAdmin } from '../../services/shared/events/kafka-topics.ts'

const run = promisify(execFile)
const CI = process.env.CI === 'true'
const hasTools = ['java', 'mvn'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0)
if (!hasTools && !CI)
  console.warn('SKIPPED infra/local up.sh --cluster test: java and mvn are needed (CI fails without them)')

const silent = pino({ level: 'silent' })
const dir = mkdtempSync(join(tmpdir(), 'tally-infra-cluster-'))
/** The test run's environment less git's variables and the infra of the run itself. */
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_'))),
  TALLY_INFRA_DIR: dir,
  TALLY_INFRA_START_TIMEOUT: '90',
  ...(CI ? { TALLY_CLICKHOUSE_CONTAINMENT: 'required' } : {}),
}
const infra = (script: string, ...args: string[]) =>
  run('bash', [`infra/local/${script}`, ...args], { env, timeout: 150_000 })

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of text.matchAll(/^export ([A-Z0-9_]+)=(.*)$/gm)) out[m[1] as string] = m[2] as string
  return out
}

/** A four-letter command's answer, or the error. */
function fourLetters(address: string, command: string): Promise<string> {
  const [host, port] = address.split(':') as [string, string]
  return new Promise((resolve, reject) => {
    let answer = ''
    const socket = connect({ host, port: Number(port) }, () => socket.write(command))
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no answer to ${command} from ${address}`)))
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
}

const accepts = (hostPort: string) =>
  new Promise<boolean>((resolve) => {
    const url = new URL(hostPort.includes('//') ? hostPort : `tcp://${hostPort}`)
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

/** Processes whose command line names `text` (a run dir is in every server's). */
function processesNaming(text: string): string[] {
  return readdirSync('/proc').flatMap((pid) => {
    if (!/^\d+$/.test(pid)) return []
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      return cmdline.includes(text) ? [`${pid}: ${cmdline.slice(0, 200)}`] : []
    } catch {
      return [] // gone meanwhile
    }
  })
}

async function sql(url: string, statement: string): Promise<string> {
  const u = new URL(url)
  const res = await fetch(`${u.origin}/?distributed_foreground_insert=1`, {
    method: 'POST',
    body: statement,
    headers: { authorization: `Basic ${btoa(`${u.username}:${decodeURIComponent(u.password)}`)}` },
    signal: AbortSignal.timeout(20_000),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${statement}: HTTP ${res.status} ${text}`)
  return text.trim()
}

describe.skipIf(!hasTools && !CI)('infra/local up.sh --cluster', () => {
  let vars: Record<string, string> = {}
  let zookeeper = ''
  let upSeconds = 0

  beforeAll(async () => {
    if (!hasTools) throw new Error('java and mvn are required in CI for infra/local')
    const started = Date.now()
    try {
      await infra('up.sh', '--cluster')
    } catch (err) {
      const { stderr = '', stdout = '' } = err as { stderr?: string; stdout?: string }
      throw new Error(`up.sh --cluster failed: ${stdout}\n${stderr}`)
    }
    upSeconds = (Date.now() - started) / 1000
    vars = parseEnv(readFileSync(join(dir, 'env'), 'utf8'))
    zookeeper = readFileSync(join(dir, 'zookeeper.address'), 'utf8').trim()
  }, 180_000)

  afterAll(async () => {
    // Whatever the tests did: down.sh is safe to repeat.
    await infra('down.sh').catch((err: Error) => console.error(`down.sh: ${err.message}`))
    rmSync(dir, { recursive: true, force: true })
  }, 90_000)

  it('writes an env file Tally accepts: three brokers, two shards, the cluster', () => {
    console.log(`up.sh --cluster took ${upSeconds.toFixed(1)} s`)
    // It holds the ClickHouse users' passwords.
    expect(statSync(join(dir, 'env')).mode & 0o777).toBe(0o600)
    expect(vars.KAFKA_BROKERS?.split(',')).toHaveLength(3)
    expect(vars.TALLY_CLICKHOUSE_CLUSTER).toBe('tally_cluster')
    const nodes = vars.TALLY_CLICKHOUSE_CLUSTER_NODES?.split(',') ?? []
    expect(nodes).toHaveLength(2)
    expect(nodes[0]).toBe(vars.CLICKHOUSE_URL)
    const config = loadConfig(vars)
    expect(config.TALLY_CLICKHOUSE_CLUSTER_NODES).toHaveLength(2)
    expect(config.S3_ENDPOINT).toBe(vars.S3_ENDPOINT)
  })

  it('runs ZooKeeper 3.9, answering srvr', async () => {
    const answer = await fourLetters(zookeeper, 'srvr')
    expect(answer).toMatch(/^Zookeeper version: 3\.9\.\d+/)
    expect(answer).toContain('Mode: standalone')
  })

  it('runs two shards that a Distributed table writes to and reads from', async () => {
    const [node1, node2] = (vars.TALLY_CLICKHOUSE_CLUSTER_NODES ?? '').split(',') as [string, string]
    for (const node of [node1, node2]) {
      expect(await sql(node, "SELECT count() FROM system.clusters WHERE cluster = 'tally_cluster'")).toBe('2')
      await sql(node, 'CREATE TABLE infra_check (id UInt64) ENGINE = MergeTree ORDER BY id')
    }
    expect(await sql(node2, "SELECT getMacro('shard')")).toBe('02')
    await sql(
      node1,
      "CREATE TABLE infra_check_all AS infra_check ENGINE = Distributed('tally_cluster', currentDatabase(), infra_check, id)",
    )
    await sql(node1, 'INSERT INTO infra_check_all SELECT number FROM numbers(100)')
    expect(await sql(node1, 'SELECT count() FROM infra_check_all')).toBe('100')
    const local = await Promise.all(
      [node1, node2].map(async (n) => Number(await sql(n, 'SELECT count() FROM infra_check'))),
    )
    expect(local[0]).toBeGreaterThan(0)
    expect(local[1]).toBeGreaterThan(0)
    expect((local[0] ?? 0) + (local[1] ?? 0)).toBe(100)
  })

  it("runs three brokers: Tally's topics get 6 partitions, 3 replicas, min.insync.replicas 2; acks=all sends", async () => {
    const config = loadConfig(vars)
    const kafka = kafkaConnection(config, silent)
    await ensureTopics(kafka, config)
    const topic = config.TALLY_REQUEST_TOPIC
    const { brokers, partitions, minIsr } = await withAdmin(kafka, async (admin) => {
      const metadata = await admin.metadata({ topics: [topic], forceUpdate: true })
      const [described] = await admin.describeConfigs({
        resources: [
          {
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: topic,
            configurationKeys: ['min.insync.replicas'],
          },
        ],
      })
      return {
        brokers: metadata.brokers.size,
        partitions: metadata.topics.get(topic)?.partitions.map((p) => p.replicas.length) ?? [],
        minIsr: described?.configs.find((c) => c.name === 'min.insync.replicas')?.value,
      }
    })
    expect(brokers).toBe(3)
    expect(partitions).toEqual([3, 3, 3, 3, 3, 3])
    expect(minIsr).toBe('2')
    const producer = new Producer({
      clientId: 'infra-check',
      bootstrapBrokers: kafka.brokers,
      serializers: stringSerializers,
      acks: ProduceAcks.ALL,
    })
    try {
      const sent = await producer.send({ messages: [{ topic, key: 'k', value: 'v' }] })
      expect(sent.offsets?.length).toBe(1)
    } finally {
      await producer.close()
    }
  })

  it('down.sh stops everything it started', async () => {
    const listening = [
      zookeeper,
      ...(vars.KAFKA_BROKERS?.split(',') ?? []),
      ...(vars.TALLY_CLICKHOUSE_CLUSTER_NODES?.split(',') ?? []),
      vars.S3_ENDPOINT as string,
    ]
    expect(await Promise.all(listening.map(accepts))).toEqual(listening.map(() => true))
    const { stdout } = await infra('down.sh')
    expect(stdout).toMatch(/^infra down in /)
    expect(await Promise.all(listening.map(accepts))).toEqual(listening.map(() => false))
    // No process left that was started there (the servers' command lines or directories name it).
    expect(processesNaming(dir)).toEqual([])
    expect(() => statSync(join(dir, 'env'))).toThrow()
  }, 90_000)
})
