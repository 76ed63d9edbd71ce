import type { Codec } from './codec.ts'
import type { RequestEvent } from './request-event.ts'

/** Durably records a batch of events (a ClickHouse insert, delivery rows). Idempotent per request id. */
export interface EventHandler {
  readonly name: string
  handle(events: RequestEvent[]): Promise<void>
}

/** Hands events to the pipeline. Resolves only once they are durable. */
export interface EventPublisher {
  readonly kind: 'kafka' | 'in-process'
  publish(events: RequestEvent[]): Promise<void>
  close(): Promise<void>
}

/**
 * Embedded mode: no broker. Each batch goes through the same codec as on Kafka and is handed to
 * every handler; publish resolves once all of them have recorded it, and rejects (so the caller
 * is told to retry) when any failed. Handlers are idempotent, so a retry never doubles.
 */
export function createInProcessPublisher(
  codec: Codec<RequestEvent>,
  handlers: EventHandler[],
): EventPublisher {
  let closed = false
  // Concurrent intakes share inserts: fewer, larger ClickHouse parts under load.
  const batched = handlers.map((h) => coalesce(h, 5_000))
  return {
    kind: 'in-process',
    async publish(events) {
      if (closed) throw new Error('event publisher is closed')
      const decoded = events.map((e) => codec.decode(codec.encode(e)))
      await Promise.all(batched.map((h) => h.handle(decoded)))
    },
    async close() {
      closed = true
    },
  }
}

/**
 * Calls arriving together (batches of several partitions, concurrent intakes) become one
 * write: calls arriving while a write is in flight wait and go together in the next one (up to
 * `maxEvents`, never splitting a call). Each caller learns the fate of the write that held its
 * events, so a partition commits only its own offsets, and only after the write.
 */
export function coalesce(handler: EventHandler, maxEvents: number): EventHandler {
  let queue: { events: RequestEvent[]; resolve: () => void; reject: (err: unknown) => void }[] = []
  let writing = false

  const next = () => {
    if (writing || queue.length === 0) return
    let n = 0
    let size = 0
    while (n < queue.length && (n === 0 || size + (queue[n]?.events.length ?? 0) <= maxEvents)) {
      size += queue[n]?.events.length ?? 0
      n++
    }
    const calls = queue.slice(0, n)
    queue = queue.slice(n)
    writing = true
    // Through a promise, so that a handler throwing synchronously still rejects its callers.
    Promise.resolve()
      .then(() =>
        handler.handle(calls.length === 1 ? (calls[0]?.events ?? []) : calls.flatMap((c) => c.events)),
      )
      .then(
        () => {
          for (const c of calls) c.resolve()
        },
        (err) => {
          for (const c of calls) c.reject(err)
        },
      )
      .finally(() => {
        writing = false
        next()
      })
  }

  return {
    name: handler.name,
    handle(events) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ events, resolve, reject })
        // After the current tick, so that batches decoded together share the write.
        setImmediate(next)
      })
    },
  }
}
