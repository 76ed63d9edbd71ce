import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { clickhouseEnv, engines, startTestTally } from '../support/harness.ts'
import { ownBroker } from '../support/kafka-broker.ts'
import { cleanUpProcesses, freshDataDir, spawnTally, stopTally, waitForOutput } from '../support/processes.ts'
import { silentServer } from '../support/silent-server.ts'
import { waitFor } from '../support/wait.ts'
import { requestApi } from './client.ts'

// Start-up and reconnection never hang silently: against a broker that never answers, one that is
// still starting, and one stopped and started again under a running Tally.
const e = engines()
describe.skipIf(!e.kafkaBrokers)('Kafka that is not there yet, never answers, or goes away', () => {
  const broker = ownBroker()
  afterAll(async () => {
    await cleanUpProcesses()
    await (await broker).remove()
  })

  it('a broker that accepts connections and never answers: the process exits 1 within its start-up timeout, naming the broker and the step', async () => {
    const silent = await silentServer()
    const { port } = silent
    try {
      const started = Date.now()
      const p = spawnTally('services/ingest/main.ts', {
        ...clickhouseEnv(),
        DATABASE_URL: engines().postgresUrl,
        TALLY_DATA_DIR: freshDataDir(),
        KAFKA_BROKERS: `127.0.0.1:${port}`,
        TALLY_KAFKA_STARTUP_TIMEOUT: '4s',
      })
      expect(await p.exited).toBe(1)
      expect(Date.now() - started).toBeLessThan(30_000)
      expect(silent.accepted()).toBeGreaterThan(0) // it did reach the "broker"
      expect(p.output()).toContain('"msg":"kafka_waiting"')
      expect(p.output()).toMatch(
        new RegExp(
          `Kafka at 127\\.0\\.0\\.1:${port} did not complete \\\\"create topics [^"]+\\\\" within \\d+ s`,
        ),
      )
    } finally {
      await silent.close()
    }
  }, 60_000)

  it('a broker still starting: the process waits, logging the step, and is ready once the broker serves', async () => {
    const b = await broker
    const topic = `tally.test.starting.${randomUUID().slice(0, 8)}`
    const p = spawnTally('services/standalone/main.ts', {
      ...clickhouseEnv(),
      DATABASE_URL: e.postgresUrl,
      TALLY_DATA_DIR: freshDataDir(),
      KAFKA_BROKERS: b.brokers,
      TALLY_REQUEST_TOPIC: topic,
      TALLY_DLQ_TOPIC: `${topic}.dlq`,
      TALLY_KAFKA_STARTUP_TIMEOUT: '180s',
    })
    await waitForOutput(p, (out) => out.includes('"msg":"kafka_waiting"') && out.includes(b.brokers), {
      what: 'the process saying it waits for Kafka',
      timeoutMs: 60_000,
    })
    expect(p.output()).not.toContain('process_ready')
    await b.start()
    await waitForOutput(p, (out) => out.includes('"msg":"process_ready"'), {
      what: 'the process ready once the broker serves',
      timeoutMs: 120_000,
    })
    expect(await stopTally(p)).toBe(0)
  }, 240_000)

  it('a broker stopped and started again under a running Tally: intake answers 503 meanwhile, then recovers; every acknowledged event is stored', async () => {
    const b = await broker
    await b.start()
    const tally = await startTestTally({
      kafka: true,
      env: { KAFKA_BROKERS: b.brokers, TALLY_KAFKA_SEND_TIMEOUT: '3s', TALLY_KAFKA_STARTUP_TIMEOUT: '60s' },
    })
    try {
      const org = await tally.newOrg()
      const api = requestApi(tally)
      const acknowledged: string[] = []
      const attempted: string[] = []
      const send = async () => {
        const id = randomUUID()
        attempted.push(id)
        const res = await api.log(org, [{ request_id: id, model: 'gpt-4o', created_at: Date.now() }])
        if (res.status === 201) acknowledged.push(id)
        return res
      }
      expect((await send()).status).toBe(201)
      await waitFor(async () => (await api.count(org)) === 1, {
        timeoutMs: 60_000,
        what: 'the first event stored',
      })

      await b.stop()
      const asked = Date.now()
      const away = await send()
      expect(away.status).toBe(503)
      expect(away.error).toBe('The events could not be recorded; retry with the same request ids')
      expect(Date.now() - asked).toBeLessThan(15_000) // the send timeout, not a hang
      const ready = await callApi(tally.app, 'GET', '/readyz')
      expect(ready.status).toBe(503)

      await b.start()
      await waitFor(async () => (await send()).status === 201, {
        timeoutMs: 120_000,
        intervalMs: 500,
        what: 'the intake accepting events again',
      })
      for (let i = 0; i < 5; i++) expect((await send()).status).toBe(201)
      await waitFor(async () => (await api.count(org)) >= acknowledged.length, {
        timeoutMs: 120_000,
        intervalMs: 250,
        what: `all ${acknowledged.length} acknowledged events stored`,
      })
      const stored = new Set(
        (await api.query(org, { limit: 1000 })).data.map((r: { request_id: string }) => r.request_id),
      )
      for (const id of acknowledged) expect(stored).toContain(id)
      for (const id of stored) expect(attempted).toContain(id)
      expect((await callApi(tally.app, 'GET', '/readyz')).status).toBe(200)
    } finally {
      await tally.close()
    }
  }, 300_000)
})
