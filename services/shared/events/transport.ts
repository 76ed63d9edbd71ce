import { type Codec, EncodeError, encodeEach } from './codec.ts'
import type { RequestEvent } from './request-event.ts'

/** Durably records a batch of events (a ClickHouse insert, delivery rows). Idempotent per request id. */
export interface EventHandler {
  readonly name: string
  handle(events: RequestEvent[]): Promise<void>
  /**
   * Why `err` can never succeed for the events that caused it (a row ClickHouse cannot parse),
   * or undefined when it may succeed later (a dependency down) and the write must be retried.
   * Without it every failure is retried.
   */
  permanent?(err: unknown): string | undefined
}

/** An event a handler can never record: its index in the caller's batch, and why. */
export interface Unrecordable {
  index: number
  reason: string
}

/** Writes batches; resolves once every recordable event is written, with those that never can be. */
export interface BatchWriter {
  readonly name: string
  write(events: RequestEvent[]): Promise<Unrecordable[]>
}

/** Hands events to the pipeline. Resolves only once they are durable. */
export interface EventPublisher {
  readonly kind: 'kafka' | 'in-process'
  publish(events: RequestEvent[]): Promise<void>
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

/**
 * Embedded mode: no broker. Each batch goes through the same codec as on Kafka and is handed to
 * every handler; publish resolves once all of them have recorded it, and rejects (so the caller
 * is told to retry) when any failed. Handlers are idempotent, so a retry never doubles. An event
 * the codec cannot carry rejects the batch with an EncodeError before anything is written; one a
 * handler can never record rejects it with UnrecordableEventsError after the rest were written.
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
      const decoded = encodeEach(codec, events).map((bytes, index) => {
        try {
          return codec.decode(bytes)
        } catch (err) {
          const e = new EncodeError((err as Error).message)
          e.index = index
          throw e
        }
      })
      const results = await Promise.all(batched.map((h) => h.write(decoded)))
      const failed = results.flat()
      if (failed.length > 0) throw new UnrecordableEventsError(failed)
    },
    async close() {
      closed = true
    },
  }
}

/**
 * Writes `events`; when the handler calls a failure permanent, halves the batch until each
 * failing event stands alone, writing every part that succeeds. So one bad row costs about
 * 2·log2(n) small inserts instead of the whole batch. A transient failure rejects (the caller
 * retries the whole batch; parts already written are replaced, never doubled).
 */
export async function writeIsolating(handler: EventHandler, events: RequestEvent[]): Promise<Unrecordable[]> {
  const failed: Unrecordable[] = []
  const attempt = async (from: number, to: number): Promise<void> => {
    try {
      await handler.handle(from === 0 && to === events.length ? events : events.slice(from, to))
    } catch (err) {
      const reason = handler.permanent?.(err)
      if (reason === undefined) throw err
      if (to - from === 1) {
        failed.push({ index: from, reason })
        return
      }
      const mid = (from + to) >>> 1
      await attempt(from, mid)
      await attempt(mid, to)
    }
  }
  if (events.length > 0) await attempt(0, events.length)
  return failed
}

/**
 * Calls arriving together (batches of several partitions, concurrent intakes) become one
 * write: calls arriving while a write is in flight wait and go together in the next one (up to
 * `maxEvents`, never splitting a call). Each caller learns the fate of its own events: a
 * transient failure rejects every caller of the write (each retries), while events that can
 * never be written are isolated and returned to the caller they came from, so one caller's bad
 * row neither blocks nor dead-letters another's. A partition commits only its own offsets, and
 * only after the write.
 */
export function coalesce(handler: EventHandler, maxEvents: number): BatchWriter {
  type Call = {
    events: RequestEvent[]
    resolve: (failed: Unrecordable[]) => void
    reject: (err: unknown) => void
  }
  let queue: Call[] = []
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
    const merged = calls.length === 1 ? (calls[0]?.events ?? []) : calls.flatMap((c) => c.events)
    // Through a promise, so that a handler throwing synchronously still rejects its callers.
    Promise.resolve()
      .then(() => writeIsolating(handler, merged))
      .then(
        (failed) => {
          let start = 0
          for (const c of calls) {
            const end = start + c.events.length
            c.resolve(
              failed
                .filter((f) => f.index >= start && f.index < end)
                .map((f) => ({ index: f.index - start, reason: f.reason })),
            )
            start = end
          }
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
    write(events) {
      return new Promise<Unrecordable[]>((resolve, reject) => {
        queue.push({ events, resolve, reject })
        // After the current tick, so that batches decoded together share the write.
        setImmediate(next)
      })
    },
  }
}
