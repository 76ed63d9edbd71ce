// npm run bench:handover — how long the partitions of a consumer killed with kill -9 go
// unconsumed. Two member processes of one group read a topic of 4 partitions that the parent
// fills steadily (each event names its partition); one member is killed, and the time until each
// of its partitions is consumed again is measured in three ways: by the survivor alone (dynamic
// membership: the dead member's session must end first), by a member started again at once
// (dynamic: a new member, the same wait), and by a member started again at once under the killed
// one's static instance id (KIP-345: it takes its partitions back without a rebalance). The
// ceiling is the restart itself: a member process starting and joining a group of its own,
// measured in the same run. Session timeout 10 s (TALLY_KAFKA_SESSION_TIMEOUT's default). Uses
// KAFKA_BROKERS when set, otherwise starts infra/local's Kafka for the run.
import { type ChildProcess, execFileSync, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { loadEventCodec } from '../services/shared/events/codec.ts'
import { requestEvents } from '../services/shared/events/event.ts'
import type { KafkaConnection } from '../services/shared/events/kafka.ts'
import { createReliableProducer } from '../services/shared/events/kafka-publisher.ts'
import { withAdmin } from '../services/shared/events/kafka-topics.ts'

const PARTITIONS = 4
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const log = pino({ level: 'silent' })
const connection = (brokers: string, clientId: string): KafkaConnection => ({
  brokers: [brokers],
  clientId,
  log,
  startupTimeoutMs: 60_000,
  sendTimeoutMs: 10_000,
})

/** A member process: consumes the group, and tells the parent which partitions it handled, when. */
async function member() {
  const { runKafkaConsumer } = await import('../services/shared/events/kafka.ts')
  const { KAFKA_BROKERS = '', GROUP = '', TOPIC = '', NAME = '', INSTANCE_ID = '' } = process.env
  const consumer = await runKafkaConsumer({
    kafka: connection(KAFKA_BROKERS, NAME),
    groupId: GROUP,
    topic: TOPIC,
    dlqTopic: `${TOPIC}.dlq`,
    codec: await loadEventCodec(),
    log,
    sessionTimeoutMs: 10_000,
    instanceId: INSTANCE_ID || undefined,
    handler: {
      name: 'report',
      async handle(events) {
        const partitions = [...new Set(requestEvents(events).map((e) => Number(e.model)))]
        process.send?.({ member: NAME, partitions, at: Date.now() })
      },
    },
  })
  process.send?.({ member: NAME, joined: Date.now() })
  process.on('message', async () => {
    await consumer.stop()
    process.exit(0)
  })
}

interface Report {
  member: string
  partitions?: number[]
  joined?: number
  at: number
}

/** The parent's view of its members: who handled which partition when. */
function members(env: NodeJS.ProcessEnv, group: string, topic: string) {
  const seen: Report[] = []
  const children = new Map<string, ChildProcess>()
  return {
    seen,
    start(name: string, instanceId = ''): Promise<number> {
      const started = Date.now()
      const child = fork(new URL(import.meta.url).pathname, [], {
        env: {
          ...env,
          BENCH_ROLE: 'member',
          GROUP: group,
          TOPIC: topic,
          NAME: name,
          INSTANCE_ID: instanceId,
        },
        stdio: 'inherit',
      })
      children.set(name, child)
      return new Promise((resolve, reject) => {
        child.on('message', (m: Report) => {
          seen.push({ ...m, at: m.at ?? m.joined ?? Date.now() })
          if (m.joined) resolve(m.joined - started)
        })
        child.once('exit', (code) => reject(new Error(`member ${name} exited ${code}`)))
      })
    },
    kill(name: string): Promise<void> {
      const child = children.get(name)
      children.delete(name)
      return new Promise((resolve) => {
        child?.once('exit', () => resolve())
        child?.kill('SIGKILL')
      })
    },
    /** The partitions `name` handled in the last `ms` before `before`. */
    partitionsOf(name: string, before: number, ms = 2_000): number[] {
      const mine = seen.filter((r) => r.member === name && r.at > before - ms && r.at <= before)
      return [...new Set(mine.flatMap((r) => r.partitions ?? []))]
    },
    /** Waits until each of `partitions` is handled by another member after `since`; resolves with when. */
    async handledAgain(partitions: number[], since: number, timeoutMs = 120_000): Promise<number> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const last = partitions.map(
          (p) => seen.find((r) => r.at > since && r.partitions?.includes(p))?.at ?? Number.NaN,
        )
        if (last.every((t) => Number.isFinite(t))) return Math.max(...last)
        if (Date.now() > deadline)
          throw new Error(`partitions ${partitions} not consumed again in ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    async stopAll() {
      for (const [name, child] of children) {
        const gone = new Promise((resolve) => child.once('exit', resolve))
        child.send('stop')
        await gone
        children.delete(name)
      }
    },
  }
}

/** Fills every partition with a few events a second (each names its partition), until stopped. */
function fill(brokers: string, topic: string) {
  const producer = createReliableProducer(connection(brokers, 'bench-producer'), 'bench events')
  let running = true
  const done = (async () => {
    const codec = await loadEventCodec()
    const { sampleEvent } = await import('../test/support/events.ts')
    while (running) {
      const messages = Array.from({ length: PARTITIONS }, (_, partition) => {
        const e = sampleEvent({ model: String(partition) })
        return { topic, partition, key: Buffer.from(e.request_id), value: codec.encode(e) }
      })
      await producer.send(messages).catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await producer.close()
  })()
  return async () => {
    running = false
    await done
  }
}

/** A topic of its own being filled, and a group of members on it, for `work`; stopped after. */
async function withGroup<T>(env: NodeJS.ProcessEnv, work: (group: ReturnType<typeof members>) => Promise<T>) {
  const brokers = env.KAFKA_BROKERS as string
  const topic = `tally.bench.handover.${randomUUID().slice(0, 8)}`
  await withAdmin(connection(brokers, 'bench-admin'), (admin) =>
    admin.createTopics({ topics: [topic, `${topic}.dlq`], partitions: PARTITIONS, replicas: -1 }),
  )
  const stopFill = fill(brokers, topic)
  const group = members(env, `bench-${randomUUID().slice(0, 8)}`, topic)
  try {
    return await work(group)
  } finally {
    await group.stopAll()
    await stopFill()
  }
}

/** Seconds until the partitions of a member killed with kill -9 are consumed again. */
function round(env: NodeJS.ProcessEnv, mode: 'survivor' | 'dynamic restart' | 'static restart') {
  const staticIds = mode === 'static restart'
  return withGroup(env, async (group) => {
    await group.start('a', staticIds ? 'member-a' : '')
    await group.start('b', staticIds ? 'member-b' : '')
    // Both members consuming their share before the kill.
    await group.handledAgain([0, 1, 2, 3], Date.now())
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const killed = Date.now()
    const orphaned = group.partitionsOf('b', killed)
    await group.kill('b')
    if (mode !== 'survivor') await group.start('b2', staticIds ? 'member-b' : '')
    const back = await group.handledAgain(orphaned, killed)
    return (back - killed) / 1000
  })
}

/** The ceiling: seconds for a member process to start, join a group of its own and consume. */
function restartCeiling(env: NodeJS.ProcessEnv) {
  return withGroup(env, async (group) => {
    const started = Date.now()
    await group.start('c')
    return ((await group.handledAgain([0, 1, 2, 3], started)) - started) / 1000
  })
}

async function drive(env: NodeJS.ProcessEnv) {
  const results: Record<string, number[]> = {
    ceiling: [],
    survivor: [],
    'dynamic restart': [],
    'static restart': [],
  }
  for (let r = 1; r <= ROUNDS; r++) {
    results.ceiling?.push(await restartCeiling(env))
    for (const mode of ['survivor', 'dynamic restart', 'static restart'] as const)
      results[mode]?.push(await round(env, mode))
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN
  console.log(
    `\nload average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; session timeout 10 s; ${ROUNDS} rounds`,
  )
  console.log('seconds until a killed member’s partitions are consumed again (rounds; median)')
  const label = {
    ceiling: 'ceiling: a member process started and consuming',
    survivor: 'dynamic membership, the survivor takes over',
    'dynamic restart': 'dynamic membership, restarted at once',
    'static restart': 'static membership, restarted at once',
  } as Record<string, string>
  for (const [mode, xs] of Object.entries(results))
    console.log(
      `${(label[mode] ?? mode).padEnd(50)} ${xs
        .map((x) => x.toFixed(1))
        .join(', ')
        .padEnd(16)} ${median(xs).toFixed(1)}`,
    )
}

async function measure() {
  const env = { ...process.env }
  let infraDir: string | undefined
  if (!env.KAFKA_BROKERS) {
    infraDir = mkdtempSync(join(tmpdir(), 'tally-bench-infra-'))
    console.log('KAFKA_BROKERS unset: starting infra/local Kafka for this run…')
    execFileSync('bash', ['infra/local/up.sh'], {
      env: { ...env, TALLY_INFRA_DIR: infraDir },
      stdio: 'inherit',
    })
    env.KAFKA_BROKERS = /KAFKA_BROKERS=(\S+)/.exec(readFileSync(join(infraDir, 'env'), 'utf8'))?.[1]
  }
  try {
    await drive(env)
  } finally {
    if (infraDir) {
      execFileSync('bash', ['infra/local/down.sh'], {
        env: { ...env, TALLY_INFRA_DIR: infraDir },
        stdio: 'inherit',
      })
      rmSync(infraDir, { recursive: true, force: true })
    }
  }
}

if (process.env.BENCH_ROLE === 'member') await member()
else await measure()
