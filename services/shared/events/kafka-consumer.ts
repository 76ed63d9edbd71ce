import type { Consumer, IHeaders, Kafka, KafkaMessage } from 'kafkajs'
import { Counter, Gauge } from 'prom-client'
import type { Logger } from '../logger.ts'
import { coalesce } from './coalesced-writer.ts'
import { type Codec, DecodeError } from './codec.ts'
import { TOPIC_MAX_MESSAGE_BYTES } from './kafka-topics.ts'
import type { RequestEvent } from './request-event.ts'
import type { EventHandler, Unrecordable } from './transport.ts'

export interface ConsumerStats {
  consumed: number
  handled: number
  deadLettered: number
  failures: number
}

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

// kafkajs's default heartbeat interval; it skips heartbeats sent sooner than that anyway.
const HEARTBEAT_EVERY_MS = 3_000

const consumedTotal = new Counter({
  name: 'tally_events_consumed_total',
  help: 'Messages read from the event topic (redeliveries count again)',
  labelNames: ['group'],
})
const handledTotal = new Counter({
  name: 'tally_events_handled_total',
  help: 'Events the group durably handled (for tally-ingest: written to ClickHouse) before committing',
  labelNames: ['group'],
})
const deadLetteredTotal = new Counter({
  name: 'tally_events_dead_lettered_total',
  help: 'Messages sent to the dead-letter topic',
  labelNames: ['group'],
})
const handlerFailures = new Counter({
  name: 'tally_consumer_handler_failures_total',
  help: 'Failed attempts to handle a chunk (retried with backoff, never skipped)',
  labelNames: ['group'],
})
const consumerLag = new Gauge({
  name: 'tally_consumer_lag',
  help: 'Messages between the last offset handled and the partition high watermark',
  labelNames: ['group', 'topic', 'partition'],
})

/**
 * Consumes the event topic: decode, hand each chunk to the handler, and only once it has been
 * written durably resolve and commit those offsets. A message that cannot be decoded goes to
 * the dead-letter topic with its reason and origin; so does an event the handler calls
 * permanently unwritable (a row ClickHouse refuses), isolated from the rest of the chunk, which
 * is written. Any other handler failure (a dependency down) is retried with backoff while
 * heartbeating; nothing is committed past unwritten events and nothing is dropped. On
 * rebalance or stop the unfinished remainder is left for redelivery.
 */
export async function runKafkaConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topic, dlqTopic, codec, log } = options
  const chunkSize = options.chunkSize ?? 5_000
  const maxBackoffMs = options.maxBackoffMs ?? 5_000
  const stats: ConsumerStats = { consumed: 0, handled: 0, deadLettered: 0, failures: 0 }
  const writer = coalesce(options.handler, chunkSize)
  const consumer: Consumer = kafka.consumer({
    groupId,
    maxBytesPerPartition: TOPIC_MAX_MESSAGE_BYTES,
    maxBytes: 2 * TOPIC_MAX_MESSAGE_BYTES,
    // Let a fetch fill up a little: fewer, larger inserts, for at most 100 ms more latency.
    minBytes: 256 * 1024,
    maxWaitTimeInMs: 100,
  })
  const dlq = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  const stopping = new AbortController()
  await Promise.all([consumer.connect(), dlq.connect()])
  await consumer.subscribe({ topic, fromBeginning: true })

  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: options.partitionsConcurrently ?? 8,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
      const alive = () => isRunning() && !isStale() && !stopping.signal.aborted
      const retry = {
        alive,
        heartbeat,
        log,
        maxBackoffMs,
        signal: stopping.signal,
        onFailure: () => {
          stats.failures++
          handlerFailures.inc({ group: groupId })
        },
      }
      const deadLetter = async (dead: { message: KafkaMessage; reason: string }[]) => {
        const sent = await untilDone(
          () =>
            dlq
              .send({
                topic: dlqTopic,
                acks: -1,
                messages: dead.map(({ message, reason }) => ({
                  key: message.key,
                  value: message.value,
                  headers: deadLetterHeaders(
                    message.headers,
                    reason,
                    batch.topic,
                    batch.partition,
                    message.offset,
                  ),
                })),
              })
              .then(() => {}),
          retry,
        )
        if (!sent) return false
        stats.deadLettered += dead.length
        deadLetteredTotal.inc({ group: groupId }, dead.length)
        log.warn(
          {
            count: dead.length,
            partition: batch.partition,
            reasons: dead.map((p) => p.reason).slice(0, 5),
          },
          'events_dead_lettered',
        )
        return true
      }
      for (let start = 0; start < batch.messages.length; start += chunkSize) {
        if (!alive()) return
        const messages = batch.messages.slice(start, start + chunkSize)
        const events: RequestEvent[] = []
        const decoded: KafkaMessage[] = []
        const poison: { message: KafkaMessage; reason: string }[] = []
        for (const message of messages) {
          try {
            if (!message.value) throw new DecodeError('empty message value')
            events.push(codec.decode(message.value))
            decoded.push(message)
          } catch (err) {
            if (!(err instanceof DecodeError)) throw err
            poison.push({ message, reason: err.message })
          }
        }
        stats.consumed += messages.length
        consumedTotal.inc({ group: groupId }, messages.length)
        // Dead letters first and on their own: a later handler retry must not send them twice.
        if (poison.length > 0 && !(await deadLetter(poison))) return
        // Rows the handler can never write (ClickHouse refuses them) are isolated from the rest,
        // which is written; they go to the DLQ before the offsets move past them.
        let unrecordable: Unrecordable[] = []
        const written = async () => {
          unrecordable = await writer.write(events)
        }
        if (events.length > 0 && !(await untilDone(written, retry))) return
        if (unrecordable.length > 0) {
          const dead = unrecordable.map((u) => ({
            message: decoded[u.index] as KafkaMessage,
            reason: u.reason,
          }))
          if (!(await deadLetter(dead))) return
        }
        stats.handled += events.length - unrecordable.length
        handledTotal.inc({ group: groupId }, events.length - unrecordable.length)
        const last = (messages.at(-1) as KafkaMessage).offset
        resolveOffset(last)
        await commitOffsetsIfNecessary()
        await heartbeat()
        const lag = Number(batch.highWatermark) - Number(last) - 1
        consumerLag.set(
          { group: groupId, topic: batch.topic, partition: String(batch.partition) },
          Math.max(lag, 0),
        )
      }
    },
  })

  return {
    stats,
    async stop() {
      stopping.abort()
      await consumer.disconnect()
      await dlq.disconnect()
    },
  }
}

function deadLetterHeaders(
  original: IHeaders | undefined,
  reason: string,
  topic: string,
  partition: number,
  offset: string,
): IHeaders {
  return {
    ...original,
    'tally-dlq-reason': reason,
    'tally-dlq-topic': topic,
    'tally-dlq-partition': String(partition),
    'tally-dlq-offset': offset,
  }
}

/** Runs `work` until it succeeds; false when the consumer had to stop first. */
async function untilDone(
  work: () => Promise<void>,
  ctx: {
    alive: () => boolean
    heartbeat: () => Promise<void>
    log: Logger
    maxBackoffMs: number
    signal: AbortSignal
    onFailure: () => void
  },
): Promise<boolean> {
  let backoff = 200
  for (;;) {
    // A long write (a large insert, or one isolating bad rows) must not cost the group membership.
    const beat = setInterval(() => void ctx.heartbeat().catch(() => {}), HEARTBEAT_EVERY_MS)
    try {
      await work()
      return true
    } catch (err) {
      ctx.onFailure()
      ctx.log.error({ err, retryInMs: backoff }, 'event_batch_failed')
      if (!ctx.alive()) return false
      await abortableDelay(backoff, ctx.signal)
      if (!ctx.alive()) return false
      await ctx.heartbeat().catch(() => {})
      backoff = Math.min(backoff * 2, ctx.maxBackoffMs)
    } finally {
      clearInterval(beat)
    }
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        resolve()
      },
      { once: true },
    )
  })
}
