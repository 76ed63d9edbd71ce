import { randomUUID } from 'node:crypto'
import type { Kafka } from 'kafkajs'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Codec, loadRequestEventCodec } from '../../services/shared/events/codec.ts'
import { createKafka } from '../../services/shared/events/kafka.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { apiClient } from './client.ts'

const log = pino({ level: 'silent' })
const WAIT = { timeoutMs: 30_000, intervalMs: 100 }
const GROUP_PREFIX = `run-${randomUUID().slice(0, 8)}.`

// Events already on the topic that ClickHouse refuses (written by a producer from before the
// intake bounded its inputs): they must not stall the partition, nor any other partition.
describe.skipIf(!engines().kafkaBrokers)('rows ClickHouse can never accept, through real Kafka', () => {
  let tally: TestTally
  let api: ReturnType<typeof apiClient>
  let kafka: Kafka
  let codec: Codec<RequestEvent>
  const stops: (() => Promise<void>)[] = []

  beforeAll(async () => {
    tally = await startTestTally({ kafka: true, env: { TALLY_CONSUMER_GROUP_PREFIX: GROUP_PREFIX } })
    api = apiClient(tally)
    kafka = createKafka(tally.config, log)
    codec = await loadRequestEventCodec()
  })
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop()
    await tally?.close()
  })

  it('are dead-lettered with the ClickHouse error; their partition and the others are written and committed', async () => {
    const org = await tally.newOrg()
    const topic = tally.config.TALLY_REQUEST_TOPIC
    const ev = (o: Partial<RequestEvent> = {}) => sampleEvent({ organization_id: org.organizationId, ...o })
    const poison = ev({ created_at: new Date(8e15), completed_at: new Date(8e15) })
    const p0 = [ev(), poison, ev()]
    const p1 = [ev(), ev(), ev()]

    const dead: { key: string; headers: Record<string, string> }[] = []
    const reader = kafka.consumer({ groupId: `dlq-reader-${randomUUID()}` })
    await reader.connect()
    stops.push(() => reader.disconnect())
    await reader.subscribe({ topic: tally.config.TALLY_DLQ_TOPIC, fromBeginning: true })
    await reader.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
        )
        dead.push({ key: String(message.key), headers })
      },
    })

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: [
          ...p0.map((e) => ({ key: e.request_id, value: codec.encode(e), partition: 0 })),
          ...p1.map((e) => ({ key: e.request_id, value: codec.encode(e), partition: 1 })),
        ],
      })
    } finally {
      await producer.disconnect()
    }

    await waitFor(async () => (await api.count(org)) === 5, { ...WAIT, what: 'the 5 good rows written' })
    await waitFor(() => dead.some((d) => d.key === poison.request_id), {
      ...WAIT,
      what: 'the bad row in the DLQ',
    })
    const letter = dead.find((d) => d.key === poison.request_id)
    expect(letter?.headers).toMatchObject({
      'tally-dlq-topic': topic,
      'tally-dlq-partition': '0',
      'tally-dlq-offset': expect.stringMatching(/^\d+$/),
    })
    expect(letter?.headers['tally-dlq-reason']).toMatch(/^clickhouse CANNOT_PARSE_DATETIME \(code 41\)/)

    const admin = kafka.admin()
    await admin.connect()
    try {
      const high = await admin.fetchTopicOffsets(topic)
      await waitFor(
        async () => {
          const [entry] = await admin.fetchOffsets({
            groupId: `${GROUP_PREFIX}tally-ingest`,
            topics: [topic],
          })
          return high.every(
            (h) => entry?.partitions.find((p) => p.partition === h.partition)?.offset === h.high,
          )
        },
        { ...WAIT, what: 'both partitions committed to their high watermark' },
      )
    } finally {
      await admin.disconnect()
    }
    const q = await api.query(org, { limit: 100 })
    expect(new Set(q.body.data.map((r: { request_id: string }) => r.request_id))).toEqual(
      new Set([...p0, ...p1].filter((e) => e !== poison).map((e) => e.request_id)),
    )
  })
})
