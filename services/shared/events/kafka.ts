import { type Consumer, type IHeaders, Kafka, type KafkaMessage, logLevel, type Producer } from 'kafkajs'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { type Codec, DecodeError } from './codec.ts'
import type { RequestEvent } from './request-event.ts'
import type { EventHandler, EventPublisher } from './transport.ts'

export function createKafka(config: Config, log: Logger): Kafka {
  if (!config.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set')
  return new Kafka({
    clientId: config.KAFKA_CLIENT_ID,
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()),
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => log.warn({ kafka: entry.namespace, ...entry.log }, 'kafka_client'),
    retry: { initialRetryTime: 200, retries: 8 },
  })
}

/** Creates the event and dead-letter topics when missing. */
export async function ensureTopics(kafka: Kafka, config: Config): Promise<void> {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const existing = new Set(await admin.listTopics())
    const wanted = [config.TALLY_REQUEST_TOPIC, config.TALLY_DLQ_TOPIC].filter((t) => !existing.has(t))
    if (wanted.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: wanted.map((topic) => ({ topic, numPartitions: config.TALLY_TOPIC_PARTITIONS })),
      })
    }
  } finally {
    await admin.disconnect()
  }
}

interface Pending {
  messages: { key: string; value: Buffer }[]
  resolve: () => void
  reject: (err: unknown) => void
}

/**
 * Idempotent, acks=all producer keyed by request id. Publishes arriving within `lingerMs` of
 * each other go out as one send, so many small intakes cost one round trip.
 */
export async function createKafkaPublisher(
  kafka: Kafka,
  topic: string,
  codec: Codec<RequestEvent>,
  options: { lingerMs?: number; maxBatch?: number } = {},
): Promise<EventPublisher> {
  const lingerMs = options.lingerMs ?? 2
  const maxBatch = options.maxBatch ?? 2_000
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  let queue: Pending[] = []
  let queued = 0
  let timer: NodeJS.Timeout | undefined
  let inFlight = Promise.resolve()

  const flush = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    const batch = queue
    queue = []
    queued = 0
    if (batch.length === 0) return
    const send = producer.send({ topic, acks: -1, messages: batch.flatMap((p) => p.messages) })
    inFlight = send.then(
      () => {
        for (const p of batch) p.resolve()
      },
      (err) => {
        for (const p of batch) p.reject(err)
      },
    )
  }

  return {
    kind: 'kafka',
    publish(events) {
      if (events.length === 0) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        queue.push({
          messages: events.map((e) => ({ key: e.request_id, value: codec.encode(e) })),
          resolve,
          reject,
        })
        queued += events.length
        if (queued >= maxBatch) flush()
        else timer ??= setTimeout(flush, lingerMs)
      })
    },
    async close() {
      flush()
      await inFlight
      await producer.disconnect()
    },
  }
}

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
}

/**
 * Consumes the event topic: decode, hand each chunk to the handler, and only once it has been
 * written durably resolve and commit those offsets. A message that cannot be decoded goes to
 * the dead-letter topic with its reason and origin. A handler failure (a dependency down) is
 * retried with backoff while heartbeating; nothing is committed past unwritten events and
 * nothing is dropped. On rebalance or stop the unfinished remainder is left for redelivery.
 */
export async function runKafkaConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topic, dlqTopic, codec, handler, log } = options
  const chunkSize = options.chunkSize ?? 5_000
  const maxBackoffMs = options.maxBackoffMs ?? 5_000
  const stats: ConsumerStats = { consumed: 0, handled: 0, deadLettered: 0, failures: 0 }
  const consumer: Consumer = kafka.consumer({ groupId, maxBytesPerPartition: 8 * 1024 * 1024 })
  const dlq = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  const stopping = new AbortController()
  await Promise.all([consumer.connect(), dlq.connect()])
  await consumer.subscribe({ topic, fromBeginning: true })

  await consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
      const alive = () => isRunning() && !isStale() && !stopping.signal.aborted
      for (let start = 0; start < batch.messages.length; start += chunkSize) {
        if (!alive()) return
        const messages = batch.messages.slice(start, start + chunkSize)
        const events: RequestEvent[] = []
        const poison: { message: KafkaMessage; reason: string }[] = []
        for (const message of messages) {
          try {
            if (!message.value) throw new DecodeError('empty message value')
            events.push(codec.decode(message.value))
          } catch (err) {
            if (!(err instanceof DecodeError)) throw err
            poison.push({ message, reason: err.message })
          }
        }
        stats.consumed += messages.length
        const written = await untilDone(
          async () => {
            if (poison.length > 0) {
              await dlq.send({
                topic: dlqTopic,
                acks: -1,
                messages: poison.map(({ message, reason }) => ({
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
            }
            if (events.length > 0) await handler.handle(events)
          },
          { alive, heartbeat, log, maxBackoffMs, signal: stopping.signal, onFailure: () => stats.failures++ },
        )
        if (!written) return
        stats.handled += events.length
        stats.deadLettered += poison.length
        if (poison.length > 0)
          log.warn(
            { count: poison.length, reasons: poison.map((p) => p.reason).slice(0, 5) },
            'events_dead_lettered',
          )
        resolveOffset((messages.at(-1) as KafkaMessage).offset)
        await commitOffsetsIfNecessary()
        await heartbeat()
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
