import { COALESCED_LIMITS, coalesce } from './coalesced-writer.ts'
import { type Codec, EncodeError, encodeEach } from './codec.ts'
import type { TallyEvent } from './event.ts'
import type { EventHandler, Unrecordable } from './handler.ts'
import { createByteAccount, PublishQueueFullError } from './publish-queue.ts'

/** Hands events to the pipeline. Resolves only once they are durable. */
export interface EventPublisher {
  readonly kind: 'kafka' | 'in-process'
  publish(events: TallyEvent[]): Promise<void>
  close(): Promise<void>
}

/** Embedded mode: events of the batch a handler can never record (the others were recorded). */
export class UnrecordableEventsError extends Error {
  readonly events: Unrecordable[]
  constructor(events: Unrecordable[]) {
    super(`${events.length} event(s) cannot be recorded: ${events[0]?.reason}`)
    this.events = events
  }
}

/** Bytes of events the in-process transport may hold being stored: in all, per organization. */
export interface InProcessBounds {
  maxBytes: number
  maxBytesPerOrg: number
}

/**
 * Embedded mode: no broker. Each batch goes through the same codec as on Kafka and is handed to
 * every handler; publish resolves once all of them have recorded it, and rejects (so the caller
 * is told to retry) when any failed. Handlers are idempotent, so a retry never doubles. An event
 * the codec cannot carry rejects the batch with an EncodeError before anything is written; one a
 * handler can never record rejects it with UnrecordableEventsError after the rest were written.
 */
export function createInProcessPublisher(
  codec: Codec<TallyEvent>,
  handlers: EventHandler[],
  bounds: InProcessBounds = { maxBytes: Number.POSITIVE_INFINITY, maxBytesPerOrg: Number.POSITIVE_INFINITY },
): EventPublisher {
  let closed = false
  // Concurrent intakes share inserts: fewer, larger ClickHouse parts under load.
  const batched = handlers.map((h) => coalesce(h, COALESCED_LIMITS))
  const waiting = createByteAccount()
  return {
    kind: 'in-process',
    async publish(events) {
      if (closed) throw new Error('event publisher is closed')
      const encoded = encodeEach(codec, events)
      const decoded = encoded.map((bytes, index) => {
        try {
          return codec.decode(bytes)
        } catch (err) {
          const e = new EncodeError((err as Error).message)
          e.index = index
          throw e
        }
      })
      const org = (events[0] as TallyEvent).organization_id
      const bytes = encoded.reduce((sum, b) => sum + b.length, 0)
      // Like the Kafka publish queue: bounded in all and per organization, a lone publish of an
      // organization never refused by its own bound.
      if (waiting.total + bytes > bounds.maxBytes)
        throw new PublishQueueFullError(
          `${waiting.total} bytes are waiting to be stored (at most ${bounds.maxBytes})`,
          2,
        )
      const own = waiting.of(org)
      if (own > 0 && own + bytes > bounds.maxBytesPerOrg)
        throw new PublishQueueFullError(
          `this organization already has ${own} bytes waiting to be stored (at most ${bounds.maxBytesPerOrg})`,
          1,
        )
      waiting.add(org, bytes)
      try {
        const results = await Promise.all(batched.map((h) => h.write(decoded)))
        const failed = results.flat()
        if (failed.length > 0) throw new UnrecordableEventsError(failed)
      } finally {
        waiting.add(org, -bytes)
      }
    },
    async close() {
      closed = true
    },
  }
}
