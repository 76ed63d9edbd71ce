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
  return {
    kind: 'in-process',
    async publish(events) {
      if (closed) throw new Error('event publisher is closed')
      const decoded = events.map((e) => codec.decode(codec.encode(e)))
      await Promise.all(handlers.map((h) => h.handle(decoded)))
    },
    async close() {
      closed = true
    },
  }
}
