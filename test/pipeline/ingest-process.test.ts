import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { startHealthServer } from '../../services/shared/metrics-server.ts'
import { sampleEvent } from '../support/events.ts'
import { engines } from '../support/harness.ts'
import { cleanUpProcesses, freshDataDir, spawnTally, stopTally, waitForOutput } from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'
import { eventsWritten, publishToTopic } from './processes.ts'

const brokers = engines().kafkaBrokers

describe('the port of processes without the API', () => {
  it('serves /livez, /readyz naming what is not ready, Prometheus text at /metrics, and 404 elsewhere', async () => {
    let engineUp = true
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checks: [
        { name: 'clickhouse', check: async () => {} },
        {
          name: 'kafka group tally-ingest',
          check: async () => {
            if (!engineUp) throw new Error('not a member of consumer group tally-ingest')
          },
        },
      ],
      log: pino({ level: 'silent' }),
    })
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${server.port}${path}`)
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
    }
    try {
      expect(await get('/livez')).toMatchObject({ status: 200, text: '{"data":{"ok":true},"error":null}' })
      expect(JSON.parse((await get('/readyz')).text)).toEqual({
        data: { ready: true, engines: { clickhouse: 'ok', 'kafka group tally-ingest': 'ok' } },
        error: null,
      })
      engineUp = false
      const notReady = await get('/readyz')
      expect(notReady.status).toBe(503)
      expect(JSON.parse(notReady.text)).toEqual({
        data: { ready: false, engines: { clickhouse: 'ok', 'kafka group tally-ingest': 'unavailable' } },
        error: 'Not ready: kafka group tally-ingest unavailable',
      })
      const metrics = await get('/metrics')
      expect(metrics.status).toBe(200)
      expect(metrics.type).toMatch(/^text\/plain/)
      expect(metrics.text).toMatch(/^process_resident_memory_bytes \d+/m)
      expect((await get('/other')).status).toBe(404)
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
        // Where it learns which organizations were deleted.
        DATABASE_URL: engines().postgresUrl,
        // A port the kernel picks: the process logs where.
        TALLY_METRICS_PORT: '0',
        TALLY_CONSUMER_GROUP_PREFIX: `run-${run}.`,
      }
      await publishToTopic(
        env,
        Array.from({ length: 12 }, () => sampleEvent()),
      )

      const child = spawnTally('services/ingest/main.ts', env)
      const [, port] = await waitForOutput(
        child,
        (output) => /"url":"http:\/\/127\.0\.0\.1:(\d+)","msg":"health_server_listening"/.exec(output),
        { what: 'the health port it listens on', timeoutMs: 90_000 },
      )
      expect(Number(port)).toBeGreaterThan(0)
      const written = () => eventsWritten(String(port))
      await waitFor(async () => (await written()) >= 12, {
        timeoutMs: 90_000,
        intervalMs: 200,
        what: 'the ingest process writing 12 events',
      })
      expect(await written()).toBe(12)
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
      expect(ready.status).toBe(200)
      expect(((await ready.json()) as { data: { engines: unknown } }).data.engines).toEqual({
        postgres: 'ok',
        clickhouse: 'ok',
        kafka: 'ok',
        [`kafka group run-${run}.tally-ingest`]: 'ok',
      })
      // The lag is asked of the broker at the scrape: every partition caught up.
      await waitFor(
        async () => {
          const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
          const lags = [...text.matchAll(/^tally_consumer_lag\{[^}]*partition="(\d)"\} (\d+)$/gm)]
          return lags.length === 2 && lags.every((m) => m[2] === '0')
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'tally_consumer_lag 0 on both partitions' },
      )
      expect(await stopTally(child)).toBe(0)
    }, 120_000)
  })
})
