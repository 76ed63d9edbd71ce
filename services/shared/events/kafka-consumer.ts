import type { Kafka } from 'kafkajs'
import type { Logger } from '../logger.ts'
import { coalesce } from './coalesced-writer.ts'
import type { Codec } from './codec.ts'
import { type ConsumerStats, createConsumerSteps } from './consumer-steps.ts'
import { TOPIC_MAX_MESSAGE_BYTES } from './kafka-topics.ts'
import type { RequestEvent } from './request-event.ts'
import type { EventHandler } from './transport.ts'

export interface RunningConsumer {
  stats: ConsumerStats
  stop(): Promise<void>
}

export interface ConsumerOptions {
  kafka: Kafka
  groupId: string
  topic: string
  dlqTopic: string
  codec: Codec<RequestEvent>
  handler: EventHandler
  log: Logger
  /** Largest number of events handed to the handler at once. */
  chunkSize?: number
  maxBackoffMs?: number
  /** Partitions whose batches are handled at the same time; their writes are coalesced. */
  partitionsConcurrently?: number
}

/**
 * Consumes the event topic with kafkajs through the consumer steps (consumer-steps.ts): decode,
 * hand each chunk to the handler, and only once it has been written durably resolve and commit
 * those offsets. A message that cannot be decoded goes to the dead-letter topic with its reason
 * and origin; so does an event the handler calls permanently unwritable (a row ClickHouse
 * refuses), isolated from the rest of the chunk, which is written. Any other handler failure (a
 * dependency down) is retried with backoff while heartbeating; nothing is committed past
 * unwritten events and nothing is dropped. On rebalance or stop the unfinished remainder is left
 * for redelivery.
 */
export async function runKafkaConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topic, dlqTopic, codec, log } = options
  const chunkSize = options.chunkSize ?? 5_000
  const consumer = kafka.consumer({
    groupId,
    maxBytesPerPartition: TOPIC_MAX_MESSAGE_BYTES,
    maxBytes: 2 * TOPIC_MAX_MESSAGE_BYTES,
    // Let a fetch fill up a little: fewer, larger inserts, for at most 100 ms more latency.
    minBytes: 256 * 1024,
    maxWaitTimeInMs: 100,
  })
  const dlq = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  const stopping = new AbortController()
  const steps = createConsumerSteps({
    groupId,
    codec,
    writer: coalesce(options.handler, chunkSize),
    sendDeadLetters: (messages) => dlq.send({ topic: dlqTopic, acks: -1, messages }).then(() => {}),
    log,
    chunkSize,
    maxBackoffMs: options.maxBackoffMs ?? 5_000,
    signal: stopping.signal,
  })
  await Promise.all([consumer.connect(), dlq.connect()])
  await consumer.subscribe({ topic, fromBeginning: true })

  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: options.partitionsConcurrently ?? 8,
    eachBatch: ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) =>
      steps.handleBatch({
        topic: batch.topic,
        partition: batch.partition,
        highWatermark: batch.highWatermark,
        messages: batch.messages,
        alive: () => isRunning() && !isStale() && !stopping.signal.aborted,
        heartbeat,
        async commit(offset) {
          resolveOffset(offset)
          await commitOffsetsIfNecessary()
        },
      }),
  })

  return {
    stats: steps.stats,
    async stop() {
      stopping.abort()
      await consumer.disconnect()
      await dlq.disconnect()
    },
  }
}
