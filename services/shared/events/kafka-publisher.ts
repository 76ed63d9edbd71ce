import type { Kafka, Producer } from 'kafkajs'
import { Counter, Histogram } from 'prom-client'
import { type Codec, encodeEach } from './codec.ts'
import { maxMessageBytes } from './kafka-topics.ts'
import type { RequestEvent } from './request-event.ts'
import type { EventPublisher } from './transport.ts'

interface Pending {
  messages: { key: string; value: Buffer }[]
  bytes: number
  resolve: () => void
  reject: (err: unknown) => void
}

const produced = new Counter({
  name: 'tally_events_produced_total',
  help: 'Request events acknowledged by Kafka (acks=all)',
})
const produceBatch = new Histogram({
  name: 'tally_produce_batch_events',
  help: 'Events per producer send',
  buckets: [1, 10, 50, 100, 250, 500, 1000, 2500],
})

/**
 * Idempotent, acks=all producer keyed by request id. One send is in flight at a time (the
 * idempotent producer's sequence numbers stay simple, per-key order holds); publishes that
 * arrive meanwhile, or within `lingerMs`, go out together in the next send, so many small
 * intakes cost one round trip. A send stays under `maxBatchBytes` because the broker refuses
 * a record batch over the topic's max.message.bytes (read at start; 1 MiB by default).
 */
export async function createKafkaPublisher(
  kafka: Kafka,
  topic: string,
  codec: Codec<RequestEvent>,
  options: { lingerMs?: number; maxBatchBytes?: number } = {},
): Promise<EventPublisher> {
  const lingerMs = options.lingerMs ?? 2
  // A send's messages spread over partitions; all of them fitting one record batch is the bound
  // that holds whatever the spread. 10% is left for record and batch framing.
  const maxBatchBytes = options.maxBatchBytes ?? Math.floor((await maxMessageBytes(kafka, topic)) * 0.9)
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const queue: Pending[] = []
  let queuedBytes = 0
  let timer: NodeJS.Timeout | undefined
  let sending: Promise<void> | undefined
  let closed = false

  /** Takes whole publishes off the queue up to the byte cap (always at least one). */
  const take = (): Pending[] => {
    let bytes = 0
    let n = 0
    while (n < queue.length && (n === 0 || bytes + (queue[n] as Pending).bytes <= maxBatchBytes)) {
      bytes += (queue[n] as Pending).bytes
      n++
    }
    queuedBytes -= bytes
    return queue.splice(0, n)
  }

  const pump = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (sending || queue.length === 0) return
    const batch = take()
    const messages = batch.flatMap((p) => p.messages)
    sending = producer.send({ topic, acks: -1, messages }).then(
      () => {
        produced.inc(messages.length)
        produceBatch.observe(messages.length)
        for (const p of batch) p.resolve()
      },
      (err) => {
        for (const p of batch) p.reject(err)
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
      return new Promise<void>((resolve, reject) => {
        // One publish is one intake: split only when it alone exceeds the cap.
        let part: Pending | undefined
        const parts: Pending[] = []
        for (const [i, e] of events.entries()) {
          const value = values[i] as Buffer
          if (!part || part.bytes + value.length > maxBatchBytes) {
            part = { messages: [], bytes: 0, resolve: () => {}, reject: () => {} }
            parts.push(part)
          }
          part.messages.push({ key: e.request_id, value })
          part.bytes += value.length
        }
        let left = parts.length
        let failed = false
        for (const p of parts) {
          p.resolve = () => {
            if (--left === 0 && !failed) resolve()
          }
          p.reject = (err) => {
            if (!failed) reject(err)
            failed = true
          }
          queue.push(p)
          queuedBytes += p.bytes
        }
        if (queuedBytes >= maxBatchBytes) pump()
        else timer ??= setTimeout(pump, lingerMs)
      })
    },
    async close() {
      closed = true
      while (queue.length > 0 || sending) {
        pump()
        await sending
      }
      await producer.disconnect()
    },
  }
}
