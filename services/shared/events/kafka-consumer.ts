import {
  Consumer,
  type Message,
  type MessagesStream,
  MessagesStreamFallbackModes,
  MessagesStreamModes,
} from '@platformatic/kafka'
import { Gauge } from 'prom-client'
import { withDeadline } from '../deadline.ts'
import type { Logger } from '../logger.ts'
import { coalesce } from './coalesced-writer.ts'
import type { Codec } from './codec.ts'
import {
  type ConsumedMessage,
  type ConsumerStats,
  createConsumerSteps,
  type MessageHeaders,
  type PartitionBatch,
} from './consumer-steps.ts'
import { clientOptions, describe, type KafkaConnection, untilKafkaAnswers } from './kafka.ts'
import { createReliableProducer } from './kafka-publisher.ts'
import { TOPIC_MAX_MESSAGE_BYTES } from './kafka-topics.ts'
import type { RequestEvent } from './request-event.ts'
import type { EventHandler } from './transport.ts'

export interface RunningConsumer {
  stats: ConsumerStats
  stop(): Promise<void>
}

export interface ConsumerOptions {
  kafka: KafkaConnection
  groupId: string
  topic: string
  dlqTopic: string
  codec: Codec<RequestEvent>
  handler: EventHandler
  log: Logger
  /** Largest number of events handed to the handler at once. */
  chunkSize?: number
  maxBackoffMs?: number
}

type Stream = MessagesStream<Buffer, Buffer, Buffer, Buffer>

const consumerLag = new Gauge({
  name: 'tally_consumer_lag',
  help: 'Messages between the group committed offset and the partition end (sampled every 5 s)',
  labelNames: ['group', 'topic', 'partition'],
})

// A commit Kafka does not answer in this time counts as failed: the stream restarts from the
// committed offsets (what was written and not committed is redelivered and deduplicated).
const COMMIT_TIMEOUT_MS = 30_000

/**
 * Consumes the event topic with @platformatic/kafka through the consumer steps
 * (consumer-steps.ts): what is ready on the stream is read at once, split by partition, and
 * the partitions' chunks are handled together (their writes coalesce); a chunk's offsets are
 * committed only once it was written durably. A message that cannot be decoded, or an event
 * the handler can never record, goes to the dead-letter topic with its reason and origin. A
 * handler failure (a dependency down) is retried with backoff; the client heartbeats on its
 * own meanwhile, so the group membership holds.
 *
 * The first group join has the start-up deadline. Afterwards the stream is supervised: if it
 * fails (a broker gone, a rebalance that invalidates a commit), it is re-created with backoff,
 * logged, from the committed offsets; nothing past them was committed, so nothing is lost.
 */
export async function runKafkaConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topic, dlqTopic, codec, log } = options
  const chunkSize = options.chunkSize ?? 5_000
  const maxBackoffMs = options.maxBackoffMs ?? 5_000
  const consumer = new Consumer({
    ...clientOptions(kafka),
    groupId,
    autocommit: false,
    maxBytesPerPartition: TOPIC_MAX_MESSAGE_BYTES,
    maxBytes: 2 * TOPIC_MAX_MESSAGE_BYTES,
    // Let a fetch fill up a little: fewer, larger inserts, for at most 100 ms more latency.
    minBytes: 256 * 1024,
    maxWaitTime: 100,
    highWaterMark: chunkSize,
    sessionTimeout: 30_000,
    rebalanceTimeout: 60_000,
    heartbeatInterval: 3_000,
  })
  const dlq = createReliableProducer(kafka, 'dead letters')
  const stopping = new AbortController()
  const steps = createConsumerSteps({
    groupId,
    codec,
    writer: coalesce(options.handler, chunkSize),
    sendDeadLetters: (messages) =>
      dlq.send(
        messages.map((m) => ({
          topic: dlqTopic,
          key: m.key ?? undefined,
          value: m.value ?? Buffer.alloc(0),
          headers: toHeaderMap(m.headers),
        })),
      ),
    log,
    chunkSize,
    maxBackoffMs,
    signal: stopping.signal,
  })
  const consume = async () => {
    const stream = (await consumer.consume({
      topics: [topic],
      mode: MessagesStreamModes.COMMITTED,
      fallbackMode: MessagesStreamFallbackModes.EARLIEST,
      autocommit: false,
    })) as Stream
    // The batch reader listens for 'error' too (reporting it): never an uncaught exception.
    return { stream, next: batchReader(stream) }
  }

  try {
    await dlq.start()
    let reading = await untilKafkaAnswers(kafka, `join consumer group ${groupId}`, consume)
    consumer.startLagMonitoring({ topics: [topic] }, 5_000)
    consumer.on('consumer:lag', (lag: Map<string, bigint[]>) => {
      for (const [t, partitions] of lag)
        partitions.forEach((l, partition) => {
          if (l >= 0n) consumerLag.set({ group: groupId, topic: t, partition: String(partition) }, Number(l))
        })
    })

    const handle = async (messages: Message<Buffer, Buffer, Buffer, Buffer>[], current: Stream) => {
      const byPartition = new Map<number, Message<Buffer, Buffer, Buffer, Buffer>[]>()
      for (const m of messages) {
        const list = byPartition.get(m.partition)
        if (list) list.push(m)
        else byPartition.set(m.partition, [m])
      }
      await Promise.all(
        [...byPartition].map(([partition, raw]) => {
          const byOffset = new Map(raw.map((m) => [String(m.offset), m]))
          const batch: PartitionBatch = {
            topic,
            partition,
            messages: raw.map(toConsumed),
            alive: () =>
              !stopping.signal.aborted &&
              !current.destroyed &&
              (consumer.assignments ?? []).some((a) => a.topic === topic && a.partitions.includes(partition)),
            commit: async (offset) => {
              const m = byOffset.get(offset)
              if (!m) throw new Error(`offset ${offset} is not in this batch`)
              await withDeadline(
                Promise.resolve(m.commit()),
                COMMIT_TIMEOUT_MS,
                `no answer to the commit of ${topic}/${partition}@${offset}`,
              )
            },
          }
          return steps.handleBatch(batch)
        }),
      )
    }

    const supervise = async () => {
      let backoff = 250
      while (!stopping.signal.aborted) {
        try {
          for (;;) {
            const messages = await reading.next(chunkSize)
            if (!messages) break
            await handle(messages, reading.stream)
            backoff = 250
          }
          if (stopping.signal.aborted) return
          throw reading.stream.errored ?? new Error('the message stream ended')
        } catch (err) {
          if (stopping.signal.aborted) return
          log.error({ err: describe(err), retryInMs: backoff }, 'kafka_consumer_restarting')
          await reading.stream.close().catch(() => {})
          for (;;) {
            await new Promise((resolve) => setTimeout(resolve, backoff))
            backoff = Math.min(backoff * 2, maxBackoffMs)
            if (stopping.signal.aborted) return
            try {
              reading = await consume()
              break
            } catch (err) {
              log.error({ err: describe(err), retryInMs: backoff }, 'kafka_consumer_restarting')
            }
          }
        }
      }
    }
    const running = supervise()

    return {
      stats: steps.stats,
      async stop() {
        stopping.abort()
        consumer.stopLagMonitoring()
        await reading.stream.close().catch(() => {})
        await running
        await consumer
          .close(true)
          .catch((err) => log.warn({ err: describe(err) }, 'kafka_consumer_close_failed'))
        await dlq.close()
      },
    }
  } catch (err) {
    await consumer.close(true).catch(() => {})
    await dlq.close().catch(() => {})
    throw err
  }
}

/**
 * Reads a stream in batches: `next(max)` resolves with the messages ready now (at most `max`),
 * waiting for the first one; with null once the stream ended; rejects with the stream's error.
 * The 'readable' listener stays attached for the stream's life: @platformatic/kafka fetches only
 * while someone listens (a stream whose readableFlowing is back to null is never fetched again).
 */
function batchReader(stream: Stream) {
  let wake: (() => void) | undefined
  const notify = () => {
    const waiting = wake
    wake = undefined
    waiting?.()
  }
  stream.on('readable', notify).on('end', notify).on('close', notify).on('error', notify)
  return async function next(max: number): Promise<Message<Buffer, Buffer, Buffer, Buffer>[] | null> {
    for (;;) {
      const out: Message<Buffer, Buffer, Buffer, Buffer>[] = []
      for (let m = stream.read(); m !== null; m = out.length < max ? stream.read() : null) out.push(m)
      if (out.length > 0) return out
      if (stream.errored) throw stream.errored
      if (stream.destroyed || stream.readableEnded) return null
      await new Promise<void>((resolve) => {
        wake = resolve
      })
    }
  }
}

function toConsumed(m: Message<Buffer, Buffer, Buffer, Buffer>): ConsumedMessage {
  const headers: MessageHeaders = {}
  for (const [k, v] of m.headerEntries) {
    const key = k.toString()
    const seen = headers[key]
    headers[key] = seen === undefined ? v : [...(Array.isArray(seen) ? seen : [seen]), v]
  }
  return { key: m.key ?? null, value: m.value ?? null, headers, offset: String(m.offset) }
}

/** Headers as the producer takes them; a repeated header stays repeated (distinct key buffers). */
function toHeaderMap(headers: MessageHeaders): Map<Buffer, Buffer> {
  const map = new Map<Buffer, Buffer>()
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) map.set(Buffer.from(key), Buffer.from(v))
  }
  return map
}
