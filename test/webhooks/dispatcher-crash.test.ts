import { type ChildProcess, spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sampleEvent } from '../support/events.ts'
import { engines, processDataDir, startTestTally, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { storeWebhook } from './support/api.ts'
import { ownDatabase } from './support/database.ts'
import { type Certificates, makeCertificates, type Receiver, startReceiver } from './support/receiver.ts'

const ROOT = new URL('../../', import.meta.url).pathname

let certs: Certificates
let receiver: Receiver
let tally: TestTally
let database: Awaited<ReturnType<typeof ownDatabase>>
const children: ChildProcess[] = []

describe.skipIf(!engines().kafkaBrokers)('dispatcher as its own process on Kafka', () => {
  beforeAll(async () => {
    certs = makeCertificates()
    receiver = await startReceiver(certs)
    database = await ownDatabase()
    tally = await startTestTally({
      kafka: true,
      roles: { api: true, ingest: true, dispatcher: false, exporter: false },
      env: { DATABASE_URL: database.url },
    })
  })

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
    await tally?.close()
    await receiver?.close()
    await database?.drop()
    certs?.remove()
  })

  /** `node services/dispatcher/main.ts`, as production runs it; resolves once it logged `ready`. */
  async function startDispatcherProcess(ready: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['services/dispatcher/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        KAFKA_BROKERS: tally.config.KAFKA_BROKERS,
        TALLY_REQUEST_TOPIC: tally.config.TALLY_REQUEST_TOPIC,
        TALLY_DLQ_TOPIC: tally.config.TALLY_DLQ_TOPIC,
        TALLY_TOPIC_PARTITIONS: String(tally.config.TALLY_TOPIC_PARTITIONS),
        TALLY_DATA_DIR: processDataDir(),
        TALLY_LOG_LEVEL: 'info',
        TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        TALLY_WEBHOOK_CA_FILE: certs.caFile,
        TALLY_WEBHOOK_CLAIM_TTL: '2s',
        TALLY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let output = ''
    child.stderr?.on('data', (c: Buffer) => {
      output += c.toString()
    })
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (c: Buffer) => {
        output += c.toString()
        if (output.includes(`"msg":"${ready}"`)) resolve()
      })
      child.once('exit', (code) => reject(new Error(`dispatcher exited with ${code}:\n${output}`)))
    })
    return child
  }

  it('lose nothing when the dispatcher is killed with attempts in flight and started again', async () => {
    const org = await tally.newOrg()
    // Stored directly: this API refuses loopback destinations; the dispatcher here allows them.
    const hook = await storeWebhook(tally, org, receiver.url)
    let holding = true
    // While holding, the receiver never answers: every attempt is in flight when the process dies.
    receiver.on(hook.path, () => (holding ? { delayMs: 60_000 } : { status: 200 }))
    // The first one joins the consumer group before the events are published.
    const first = await startDispatcherProcess('process_ready')
    const events = Array.from({ length: 20 }, () => sampleEvent({ organization_id: org.organizationId }))
    await tally.publisher.publish(events)
    await waitFor(() => receiver.to(hook.path).length >= 20, {
      what: '20 attempts in flight',
      timeoutMs: 30_000,
    })

    first.kill('SIGKILL')
    await new Promise((resolve) => first.once('exit', resolve))
    holding = false
    // The second one waits for Kafka to give up on the dead member (its session timeout) before
    // it consumes; the claimed deliveries do not wait for that: their lease ends and they are due.
    const second = await startDispatcherProcess('dispatcher_started')

    await waitFor(
      async () => {
        const [row] = await tally.sql<{ delivered: number }[]>`
          select count(*)::int as delivered from webhook_deliveries
          where webhook_id = ${hook.id} and status = 'delivered'`
        return row?.delivered === 20
      },
      { what: 'all 20 deliveries to land after the restart', timeoutMs: 30_000 },
    )
    const rows = await tally.sql<{ request_id: string; attempts: number }[]>`
      select request_id, attempts from webhook_deliveries where webhook_id = ${hook.id}`
    expect(rows.map((r) => r.request_id).sort()).toEqual(events.map((e) => e.request_id).sort())
    // The killed attempts were never recorded; the one that landed is.
    expect(rows.every((r) => r.attempts === 1)).toBe(true)
    const answered = receiver.to(hook.path).slice(20)
    const landed = new Set(answered.map((r) => JSON.parse(r.body.toString()).metadata.requestId))
    expect(landed.size).toBe(20)

    second.kill('SIGTERM')
    const code = await new Promise((resolve) => second.once('exit', resolve))
    expect(code).toBe(0)
  }, 90_000)
})
