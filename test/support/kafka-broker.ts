import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../services/shared/net.ts'
import { spawnCommand, stopTally, type TallyProcess, waitForOutput } from './processes.ts'

/** The test run's environment less git's own variables (a run under a git hook must not leak them). */
function brokerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')))
}

/**
 * One broker JVM run by infra/local/kafka.sh in the foreground with `args`: started, killed, frozen
 * and started again on the same data. `what` names it in a start that fails or times out.
 */
function brokerProcess(what: string, args: string[]) {
  let running: TallyProcess | undefined
  return {
    /** Starts the broker (unless it runs) and waits until it says it serves. */
    async start() {
      if (running && running.child.exitCode === null) return
      const p = spawnCommand('bash', ['infra/local/kafka.sh', ...args], brokerEnv())
      running = p
      await waitForOutput(p, (out) => out.includes('Kafka Server started'), {
        what: `${what} to start`,
        timeoutMs: 90_000,
      })
    },
    /** SIGKILL: the broker dies at once, as with a machine lost; its data stays for start(). */
    async kill() {
      if (!running || running.child.exitCode !== null) return
      const gone = running.exited
      running.child.kill('SIGKILL')
      await gone
      running = undefined
    },
    /** SIGSTOP: the broker hangs, its connections open and unanswered, until thaw(). */
    freeze() {
      running?.child.kill('SIGSTOP')
    },
    thaw() {
      running?.child.kill('SIGCONT')
    },
    /** SIGTERM (a clean broker shutdown) and waits for the exit. */
    async stop() {
      if (running && running.child.exitCode === null) await stopTally(running)
      running = undefined
    },
    /** What the running broker logged (empty when it does not run). */
    output: () => running?.output() ?? '',
  }
}

/**
 * A Kafka broker of a test's own (infra/local/kafka.sh serve): fixed ports and data directory, so
 * the test can stop it and start the same broker again while Tally runs against it.
 */
export async function ownBroker() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-kafka-'))
  const port = await freePort()
  const controllerPort = await freePort()
  const broker = brokerProcess(`the broker on port ${port}`, [
    'serve',
    dir,
    String(port),
    String(controllerPort),
  ])
  return {
    brokers: `127.0.0.1:${port}`,
    /** Its node.id, as a node of a cluster has one. */
    id: 1,
    port,
    ...broker,
    async remove() {
      await broker.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type OwnBroker = Awaited<ReturnType<typeof ownBroker>>

/** A KRaft cluster id: a UUID's 16 bytes in base64url (22 characters), not starting with '-'. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

/**
 * A Kafka cluster of a test's own: `size` nodes (each broker and controller, infra/local/kafka.sh
 * serve-node) on fixed ports with data directories of their own, replication factor 3 and
 * min.insync.replicas 2. A test kills, stops and starts each node alone; the others go on.
 */
export async function ownKafkaCluster(size: number) {
  const dir = mkdtempSync(join(tmpdir(), 'tally-kafka-cluster-'))
  const id = clusterId()
  const ports: { id: number; port: number; controllerPort: number }[] = []
  for (let n = 1; n <= size; n++)
    ports.push({ id: n, port: await freePort(), controllerPort: await freePort() })
  const voters = ports.map((p) => `${p.id}@127.0.0.1:${p.controllerPort}`).join(',')
  const nodes = ports.map((p) => ({
    /** The node's node.id (and broker id in metadata). */
    id: p.id,
    port: p.port,
    ...brokerProcess(`Kafka node ${p.id} of ${size} (port ${p.port})`, [
      'serve-node',
      join(dir, `node-${p.id}`),
      String(p.id),
      String(p.port),
      String(p.controllerPort),
      voters,
      id,
    ]),
  }))
  const node = (nodeId: number) => {
    const found = nodes.find((n) => n.id === nodeId)
    if (!found) throw new Error(`no Kafka node ${nodeId} (nodes: ${nodes.map((n) => n.id).join(', ')})`)
    return found
  }
  return {
    /** Every node's client address, comma-separated (KAFKA_BROKERS). */
    brokers: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    nodes,
    node,
    /**
     * Starts every node at once (a node serves only once a majority of controllers runs) and waits
     * for each; a node that does not start is named in the error, and the others are stopped.
     */
    async start() {
      const started = await Promise.allSettled(nodes.map((n) => n.start()))
      const failed = started.find((s) => s.status === 'rejected')
      if (failed) {
        await Promise.all(nodes.map((n) => n.kill()))
        throw failed.reason
      }
    },
    /**
     * Kills every node (SIGKILL: their data goes too, so no clean shutdown is owed, and one would
     * wait for a controller quorum the others are leaving) and removes the data directories.
     */
    async remove() {
      await Promise.all(nodes.map((n) => n.kill()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type OwnKafkaCluster = Awaited<ReturnType<typeof ownKafkaCluster>>
