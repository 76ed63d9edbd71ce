import { randomUUID } from 'node:crypto'
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes } from '@platformatic/kafka'
import { clientOptions, type KafkaConnection } from '../../services/shared/events/kafka.ts'
import { createReliableProducer } from '../../services/shared/events/kafka-publisher.ts'
import { withAdmin } from '../../services/shared/events/kafka-topics.ts'
import { waitFor } from './wait.ts'

// What tests ask of Kafka itself, through the same client Tally uses.

/** Creates `topic` with `partitions` and waits until each has a leader. */
export async function createTopic(kafka: KafkaConnection, topic: string, partitions: number) {
  await withAdmin(kafka, async (admin) => {
    await admin.createTopics({ topics: [topic], partitions, replicas: -1 })
    await waitFor(
      async () => {
        const meta = await admin.metadata({ topics: [topic], forceUpdate: true })
        const parts = meta.topics.get(topic)?.partitions ?? []
        return parts.length === partitions && parts.every((p) => p && p.leader >= 0)
      },
      { timeoutMs: 30_000, what: `leaders for the ${partitions} partitions of ${topic}` },
    )
  })
}

/** The end offset of each partition of `topic` (the next offset to be written). */
export function topicEnds(kafka: KafkaConnection, topic: string): Promise<number[]> {
  return withAdmin(kafka, async (admin) => {
    const { topics } = await admin.metadata({ topics: [topic], forceUpdate: true })
    const count = topics.get(topic)?.partitionsCount ?? 0
    const [listed] = await admin.listOffsets({
      topics: [
        {
          name: topic,
          partitions: Array.from({ length: count }, (_, p) => ({ partitionIndex: p, timestamp: -1n })),
        },
      ],
    })
    const ends = new Array<number>(count).fill(0)
    for (const p of listed?.partitions ?? []) ends[p.partitionIndex] = Number(p.offset)
    return ends
  })
}

/** The group's committed offset for each partition of `topic` it committed (-1: none). */
export function committedOffsets(
  kafka: KafkaConnection,
  groupId: string,
  topic: string,
): Promise<Map<number, number>> {
  return withAdmin(kafka, async (admin) => {
    const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] })
    const partitions = group?.topics.find((t) => t.name === topic)?.partitions ?? []
    return new Map(partitions.map((p) => [p.partitionIndex, Number(p.committedOffset)]))
  })
}

/** Puts the messages on `topic` as they are (no codec), as a foreign or older producer would. */
export async function produceRaw(
  kafka: KafkaConnection,
  topic: string,
  messages: { key: string; value: Buffer; headers?: Record<string, string>; partition?: number }[],
) {
  // The producer Tally itself sends with (idempotent, acks=all, Java partitioning, a deadline).
  const producer = createReliableProducer(kafka, 'test messages')
  try {
    await producer.send(
      messages.map((m) => ({
        topic,
        key: Buffer.from(m.key),
        value: m.value,
        ...(m.partition === undefined ? {} : { partition: m.partition }),
        headers: new Map(Object.entries(m.headers ?? {}).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])),
      })),
    )
  } finally {
    await producer.close()
  }
}

export interface ReadMessage {
  key: string
  value: string
  headers: Record<string, string>
}

/** Reads `topic` from its beginning in a group of its own; the list fills as messages arrive, until `stop`. */
export async function readTopic(kafka: KafkaConnection, topic: string) {
  const consumer = new Consumer({
    ...clientOptions(kafka),
    groupId: `reader-${randomUUID()}`,
    maxWaitTime: 100,
  })
  const stream = await consumer.consume({
    topics: [topic],
    mode: MessagesStreamModes.EARLIEST,
    fallbackMode: MessagesStreamFallbackModes.EARLIEST,
  })
  const messages: ReadMessage[] = []
  stream.on('data', (m) => {
    const headers: Record<string, string> = {}
    for (const [k, v] of m.headerEntries) headers[String(k)] = String(v)
    messages.push({ key: String(m.key), value: String(m.value), headers })
  })
  stream.on('error', () => {})
  return {
    messages,
    async stop() {
      await stream.close()
      await consumer.close(true)
    },
  }
}
