/**
 * What records events and what a batch write answers: the contract between the transports
 * (transport.ts, kafka-consumer.ts), the writer that coalesces batches (coalesced-writer.ts) and
 * the handlers of each role. Its own module, so that none of those imports another for its types.
 */
import type { TallyEvent } from './event.ts'

/** Durably records a batch of events (a ClickHouse insert, delivery rows). Idempotent per request id. */
export interface EventHandler {
  readonly name: string
  handle(events: TallyEvent[]): Promise<void>
  /**
   * Why `err` can never succeed for the events that caused it (a row ClickHouse cannot parse),
   * or undefined when it may succeed later (a dependency down) and the write must be retried.
   * Without it every failure is retried.
   */
  permanent?(err: unknown): string | undefined
  /**
   * Whether `err` says the dependency cannot take any write now (a server or a shard down or
   * overloaded), so that it speaks against none of the events: the write is retried whole, and
   * no event is isolated or suspected for it (a shard down fails only the events bound for it,
   * while the others are written). Without it, a failure while other parts of the batch are
   * written may count against the events of the failing part.
   */
  transient?(err: unknown): boolean
}

/** An event a handler can never record: its index in the caller's batch, and why. */
export interface Unrecordable {
  index: number
  reason: string
  /**
   * Refused with an error the handler does not know as the event's fault, while other events
   * of the batch were written (an isolating write): the caller decides after how many times.
   */
  suspect?: boolean
}

/** Writes batches; resolves once every recordable event is written, with those that never can be. */
export interface BatchWriter {
  readonly name: string
  /**
   * With `isolate`, the batch is written alone and in parts, and an event whose part keeps
   * failing while others are written comes back as a suspect (see Unrecordable).
   */
  write(events: TallyEvent[], options?: { isolate?: boolean }): Promise<Unrecordable[]>
}
