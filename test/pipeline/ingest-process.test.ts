import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { startMetricsServer } from '../../services/shared/metrics-server.ts'
import { freePort } from '../../services/shared/net.ts'
import { sampleEvent } from '../support/events.ts'
import { engines } from '../support/harness.ts'
import { cleanUpProcesses, freshDataDir, spawnTally, stopTally } from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'
import { eventsWritten, publishToTopic } from './processes.ts'

const brokers = engines().kafkaBrokers

describe('metrics of processes without the API', () => {
  it('serves Prometheus text at /metrics and 404 elsewhere', async () => {
    const server = await startMetricsServer(0, '127.0.0.1')
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
      expect(await res.text()).toMatch(/^process_resident_memory_bytes \d+/m)
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  describe.skipIf(!brokers)('services/ingest/main.ts as its own process', () => {
    const dataDir = freshDataDir('tally-ingest-process-')
    afterAll(cleanUpProcesses)

    it('consumes the topic, writes to its ClickHouse, reports it at /metrics and stops cleanly', async () => {
      const run = randomUUID().slice(0, 8)
      const env = {
        KAFKA_BROKERS: brokers ?? '',
        TALLY_REQUEST_TOPIC: `tally.test.${run}`,
        TALLY_DLQ_TOPIC: `tally.test.${run}.dlq`,
        TALLY_TOPIC_PARTITIONS: '2',
        TALLY_DATA_DIR: dataDir,
        TALLY_METRICS_PORT: String(await freePort()),
        TALLY_CONSUMER_GROUP_PREFIX: `run-${run}.`,
        TALLY_LOG_LEVEL: 'warn',
      }
      await publishToTopic(
        env,
        Array.from({ length: 12 }, () => sampleEvent()),
      )

      const child = spawnTally('services/ingest/main.ts', env)
      const written = () => eventsWritten(env.TALLY_METRICS_PORT)
      await waitFor(async () => (await written()) >= 12, {
        timeoutMs: 90_000,
        intervalMs: 200,
        what: 'the ingest process writing 12 events',
      })
      expect(await written()).toBe(12)
      expect(await stopTally(child)).toBe(0)
    }, 120_000)
  })
})
