import { compatibilityPartitioner, type MessageToProduce, ProduceAcks, Producer } from '@platformatic/kafka'
import { withDeadline } from '../deadline.ts'
import { counter, histogram } from '../metrics.ts'
import { type Codec, encodeEach } from './codec.ts'
import { eventKey, type TallyEvent } from './event.ts'
import { clientOptions, describe, type KafkaConnection, untilKafkaAnswers } from './kafka-connection.ts'
import { maxMessageBytes } from './kafka-topics.ts'
import { createPublishQueue } from './publish-queue.ts'
import type { EventPublisher } from './transport.ts'

const produced = counter('tally_events_produced_total', 'Request events acknowledged by Kafka (acks=all)')
const produceBatch = histogram('tally_produce_batch_events', 'Events per producer send', {
  buckets: [1, 10, 50, 100, 250, 500, 1000, 2500],
})

/**
 * An idempotent acks=all producer whose sends each have a deadline. A send that fails or
 * outlives it rejects (the intake answers 503 and the caller retries with the same request ids,
 * which ClickHouse deduplicates), and the producer is replaced: the next send starts a fresh
 * producer id, so a wedged one (a broker gone mid-send) never blocks later sends.
 */
export function createReliableProducer(kafka: KafkaConnection, what: string) {
  let current: Promise<Producer> | undefined
  const open = async () => {
    const producer = new Producer({
      ...clientOptions(kafka),
      idempotent: true,
      acks: ProduceAcks.ALL,
      // Java's partitioning (also kafkajs's): a key lands where any other Kafka client puts it.
      partitioner: compatibilityPartitioner,
    })
    try {
      await withDeadline(
        producer.initIdempotentProducer({}),
        kafka.sendTimeoutMs,
        `${what}: no answer to producer init`,
      )
      return producer
    } catch (err) {
      void producer.close(true).catch(() => {})
      throw err
    }
  }
  const discard = (failed: Promise<Producer>) => {
    if (current !== failed) return
    current = undefined
    void failed.then((p) => p.close(true)).catch(() => {})
  }
  return {
    /** Opens the producer (InitProducerId) within the start-up deadline, retrying while Kafka starts. */
    async start(): Promise<void> {
      const producer = await untilKafkaAnswers(kafka, `${what}: producer init (InitProducerId)`, open)
      current = Promise.resolve(producer)
    },
    async send(messages: MessageToProduce[]): Promise<void> {
      current ??= open()
      const opening = current
      try {
        const producer = await opening
        await withDeadline(producer.send({ messages }), kafka.sendTimeoutMs, `${what}: no acknowledgement`)
      } catch (err) {
        discard(opening)
        kafka.log.warn({ producer: what, err: describe(err) }, 'kafka_send_failed')
        throw err
      }
    },
    async close(): Promise<void> {
      const last = current
      current = undefined
      if (last) await (await last.catch(() => undefined))?.close(true)
    },
  }
}

/**
 * Request events to the topic, keyed by request id. One send in flight at a time (per-key order
 * holds); publishes that arrive meanwhile, or within `lingerMs`, go out together in the next
 * send, taken round robin over organizations (publish-queue.ts), so many small intakes cost one
 * round trip and a large one does not hold up the others. A send stays under `maxBatchBytes`
 * because the broker refuses a record batch over the topic's max.message.bytes (read at start;
 * 1 MiB by default). What waits is bounded in bytes (`maxQueuedBytes`, `maxQueuedBytesPerOrg`:
 * PublishQueueFullError past them), and a publish fails once it waited `kafka.sendTimeoutMs` in
 * all, queued or sending.
 */
export async function createKafkaPublisher(
  kafka: KafkaConnection,
  topic: string,
  codec: Codec<TallyEvent>,
  options: {
    lingerMs?: number
    maxBatchBytes?: number
    maxQueuedBytes?: number
    maxQueuedBytesPerOrg?: number
  } = {},
): Promise<EventPublisher> {
  const lingerMs = options.lingerMs ?? 2
  // A send's messages spread over partitions; all of them fitting one record batch is the bound
  // that holds whatever the spread. 10% is left for record and batch framing.
  const maxBatchBytes = options.maxBatchBytes ?? Math.floor((await maxMessageBytes(kafka, topic)) * 0.9)
  const producer = createReliableProducer(kafka, 'request events')
  await producer.start()
  const queue = createPublishQueue<MessageToProduce>({
    maxBytes: options.maxQueuedBytes ?? 64 * 1024 * 1024,
    maxBytesPerOrg: options.maxQueuedBytesPerOrg ?? 16 * 1024 * 1024,
    timeoutMs: kafka.sendTimeoutMs,
  })
  let timer: NodeJS.Timeout | undefined
  let sending: Promise<void> | undefined
  let closed = false

  const pump = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (sending || queue.size === 0) return
    const batch = queue.take(maxBatchBytes)
    const messages = batch.flatMap((p) => p.messages)
    sending = producer.send(messages).then(
      () => {
        produced.inc(messages.length)
        produceBatch.observe(messages.length)
        for (const p of batch) p.sent()
      },
      (err) => {
        for (const p of batch) p.failed(err)
      },
    )
    void sending.finally(() => {
      sending = undefined
      // Whatever queued during the send goes out now: the send itself was the linger.
      pump()
    })
  }

  return {
    kind: 'kafka',
    async publish(events) {
      if (events.length === 0) return
      if (closed) throw new Error('event publisher is closed')
      // Throws an EncodeError naming the event before anything of the publish is queued.
      const values = encodeEach(codec, events)
      // One publish is one intake: split only when it alone exceeds the cap.
      const parts: { messages: MessageToProduce[]; bytes: number }[] = []
      let part: (typeof parts)[number] | undefined
      for (const [i, e] of events.entries()) {
        const value = values[i] as Buffer
        if (!part || part.bytes + value.length > maxBatchBytes) {
          part = { messages: [], bytes: 0 }
          parts.push(part)
        }
        part.messages.push({ topic, key: Buffer.from(eventKey(e)), value })
        part.bytes += value.length
      }
      const published = queue.add((events[0] as TallyEvent).organization_id, parts)
      if (queue.bytes >= maxBatchBytes) pump()
      else timer ??= setTimeout(pump, lingerMs)
      return published
    },
    async close() {
      closed = true
      while (queue.size > 0 || sending) {
        pump()
        await sending
      }
      await producer.close()
    },
  }
}
