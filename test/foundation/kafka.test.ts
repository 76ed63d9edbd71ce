import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../services/shared/config.ts'
import { loadEventCodec } from '../../services/shared/events/codec.ts'
import { requestEvents } from '../../services/shared/events/event.ts'
import {
  createKafkaPublisher,
  ensureTopics,
  kafkaConnection,
  runKafkaConsumer,
} from '../../services/shared/events/kafka.ts'
import { withAdmin } from '../../services/shared/events/kafka-topics.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { engines } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'

const brokers = engines().kafkaBrokers
const log = pino({ level: 'silent' })

describe.skipIf(!brokers)('Kafka transport', () => {
  const run = randomUUID().slice(0, 8)
  const config = loadConfig({
    KAFKA_BROKERS: brokers ?? '',
    TALLY_REQUEST_TOPIC: `tally.test.${run}`,
    TALLY_DLQ_TOPIC: `tally.test.${run}.dlq`,
    TALLY_TOPIC_PARTITIONS: '3',
  })
  const kafka = kafkaConnection(config, log)
  const stops: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop()
  })

  it('creates its topics with the configured partitions, and again is a no-op', async () => {
    await ensureTopics(kafka, config)
    await ensureTopics(kafka, config)
    const { topics } = await withAdmin(kafka, (admin) =>
      admin.metadata({ topics: [config.TALLY_REQUEST_TOPIC, config.TALLY_DLQ_TOPIC], forceUpdate: true }),
    )
    expect(
      [config.TALLY_REQUEST_TOPIC, config.TALLY_DLQ_TOPIC].map((t) => topics.get(t)?.partitionsCount),
    ).toEqual([3, 3])
  })

  it('carries Avro events from the producer to a consumer group, which sees each one decoded', async () => {
    const codec = await loadEventCodec()
    const publisher = await createKafkaPublisher(kafka, config.TALLY_REQUEST_TOPIC, codec)
    stops.push(() => publisher.close())
    const received: RequestEvent[] = []
    const consumer = await runKafkaConsumer({
      kafka,
      groupId: `tally-test-${run}`,
      topic: config.TALLY_REQUEST_TOPIC,
      dlqTopic: config.TALLY_DLQ_TOPIC,
      codec,
      handler: { name: 'collect', handle: async (events) => void received.push(...requestEvents(events)) },
      log,
    })
    stops.push(() => consumer.stop())

    const sent = Array.from({ length: 25 }, (_, i) => sampleEvent({ model: `m-${i}` }))
    await Promise.all([publisher.publish(sent.slice(0, 10)), publisher.publish(sent.slice(10))])
    await waitFor(() => received.length >= sent.length, { timeoutMs: 30_000, what: 'all events consumed' })
    const byId = new Map(received.map((e) => [e.request_id, e]))
    expect(byId.size).toBe(sent.length)
    for (const e of sent) expect(byId.get(e.request_id)).toEqual(e)
  })
  it('keeps fetching while events keep arriving: each round is consumed before the next is published', async () => {
    const codec = await loadEventCodec()
    const publisher = await createKafkaPublisher(kafka, config.TALLY_REQUEST_TOPIC, codec)
    stops.push(() => publisher.close())
    const seen = new Set<string>()
    const consumer = await runKafkaConsumer({
      kafka,
      groupId: `tally-test-rounds-${run}`,
      topic: config.TALLY_REQUEST_TOPIC,
      dlqTopic: config.TALLY_DLQ_TOPIC,
      codec,
      handler: {
        name: 'collect',
        handle: async (events) => {
          for (const e of events) seen.add(e.request_id)
        },
      },
      log,
      chunkSize: 100,
    })
    stops.push(() => consumer.stop())
    // The topic already holds the first test's events; each round adds 300 of this test's own.
    const mine: string[] = []
    for (let round = 1; round <= 8; round++) {
      const events = Array.from({ length: 300 }, () => sampleEvent())
      mine.push(...events.map((e) => e.request_id))
      await publisher.publish(events)
      await waitFor(() => mine.every((id) => seen.has(id)), {
        timeoutMs: 30_000,
        what: `round ${round}'s events consumed`,
      })
    }
  })
})
