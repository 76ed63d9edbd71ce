import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { freePort } from '../../services/shared/net.ts'
import { sampleEvent } from '../support/events.ts'
import { engines } from '../support/harness.ts'
import { committedOffsets, topicEnds } from '../support/kafka.ts'
import { cleanUpProcesses, freshDataDir, spawnTally, stopTally } from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'
import { eventsWritten, publishToTopic } from './processes.ts'

const brokers = engines().kafkaBrokers
const EVENTS = 4_000

describe.skipIf(!brokers)('an ingest process killed with SIGKILL in the middle of its work', () => {
  const dataDir = freshDataDir('tally-ingest-killed-')
  afterAll(cleanUpProcesses)

  it('loses nothing and doubles nothing once a successor has caught up', async () => {
    const run = randomUUID().slice(0, 8)
    const org = randomUUID()
    const env = {
      KAFKA_BROKERS: brokers ?? '',
      TALLY_REQUEST_TOPIC: `tally.test.${run}`,
      TALLY_DLQ_TOPIC: `tally.test.${run}.dlq`,
      TALLY_TOPIC_PARTITIONS: '2',
      TALLY_DATA_DIR: dataDir,
      DATABASE_URL: engines().postgresUrl,
      TALLY_CONSUMER_GROUP_PREFIX: `run-${run}.`,
      // Small writes, so that the kill lands between two of them.
      TALLY_INGEST_CHUNK_SIZE: '25',
      TALLY_LOG_LEVEL: 'warn',
    }
    const { config, kafka } = await publishToTopic(
      env,
      Array.from({ length: EVENTS }, () => sampleEvent({ organization_id: org })),
    )

    const start = async () => {
      const port = await freePort()
      const p = spawnTally('services/ingest/main.ts', { ...env, TALLY_METRICS_PORT: String(port) })
      const written = () => eventsWritten(port)
      return { ...p, written }
    }

    const first = await start()
    await waitFor(async () => (await first.written()) > 0, {
      timeoutMs: 90_000,
      intervalMs: 5,
      what: 'a first write',
    })
    first.child.kill('SIGKILL')
    await first.exited

    const groupId = `${env.TALLY_CONSUMER_GROUP_PREFIX}tally-ingest`
    const lag = async () => {
      const ends = await topicEnds(kafka, config.TALLY_REQUEST_TOPIC)
      const committed = await committedOffsets(kafka, groupId, config.TALLY_REQUEST_TOPIC)
      return ends.reduce((sum, end, partition) => sum + end - Math.max(0, committed.get(partition) ?? 0), 0)
    }
    // The kill must have left work behind, or this test proves nothing.
    expect(await lag()).toBeGreaterThan(0)

    const second = await start()
    try {
      await waitFor(async () => (await lag()) === 0, {
        timeoutMs: 120_000,
        intervalMs: 200,
        what: () => `the successor catching up; its output:\n${second.output()}`,
      })
    } finally {
      expect(await stopTally(second), `the successor's exit code; its output:\n${second.output()}`).toBe(0)
    }

    // The successor has stopped and released the data directory: read what both wrote.
    const ch = await openClickHouse(loadConfig({ TALLY_DATA_DIR: dataDir }), pino({ level: 'silent' }))
    try {
      const rs = await ch.client.query({
        query: `SELECT count() AS rows, uniqExact(request_id) AS ids
                FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}`,
        query_params: { org },
        format: 'JSONEachRow',
      })
      expect(await rs.json()).toEqual([{ rows: EVENTS, ids: EVENTS }])
    } finally {
      await ch.close()
    }
  }, 240_000)
})
