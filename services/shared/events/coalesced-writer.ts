import { eventSize, type TallyEvent } from './event.ts'
import type { BatchWriter, EventHandler, Unrecordable } from './handler.ts'

/** How much one write may hold: events, and their approximate bytes (a single event may exceed it). */
export interface WriteLimits {
  maxEvents: number
  maxBytes: number
}

/** The in-process transport's limits: as large as a consumer's default chunk. */
export const COALESCED_LIMITS: WriteLimits = { maxEvents: 5_000, maxBytes: 32 * 1024 * 1024 }

/**
 * Writes `events`; when the handler calls a failure permanent, halves the batch until each
 * failing event stands alone, writing every part that succeeds. So one bad row costs about
 * 2·log2(n) small inserts instead of the whole batch. A transient failure rejects (the caller
 * retries the whole batch; parts already written are replaced, never doubled).
 *
 * `suspect`: any failure is halved the same way, since the caller has seen the batch fail too
 * often; but a failure stands against the events only once other parts were written: while
 * nothing is, after about 2·log2(n) failed parts (the dependency itself fails), the write
 * rejects as transient. Events isolated this way come back marked `suspect`. A failure the
 * handler calls transient (a shard down) stands against no event: the write rejects at once.
 */
async function writeIsolating(
  handler: EventHandler,
  events: TallyEvent[],
  suspect = false,
): Promise<Unrecordable[]> {
  const failed: Unrecordable[] = []
  let wrote = false
  let fruitless = 0
  const budget = 2 * Math.ceil(Math.log2(Math.max(2, events.length))) + 2
  /** The part's failure when it stands against its events, undefined when written. */
  const tryPart = async (from: number, to: number) => {
    try {
      await handler.handle(from === 0 && to === events.length ? events : events.slice(from, to))
      wrote = true
      return undefined
    } catch (err) {
      // The dependency, not the events: the whole write is retried later.
      if (handler.transient?.(err)) throw err
      const known = handler.permanent?.(err)
      if (known !== undefined) return { reason: known, suspect: false }
      if (!suspect) throw err
      if (!wrote && ++fruitless >= budget) throw err
      return {
        reason: (err as Error)?.message?.split('\n')[0]?.slice(0, 300) ?? String(err),
        suspect: true,
        err,
      }
    }
  }
  const isolate = async (from: number, to: number, why: { reason: string; suspect: boolean }) => {
    if (to - from === 1) {
      failed.push({ index: from, reason: why.reason, ...(why.suspect ? { suspect: true } : {}) })
      return
    }
    const mid = (from + to) >>> 1
    const left = await tryPart(from, mid)
    const right = await tryPart(mid, to)
    if (left) await isolate(from, mid, left)
    if (right) await isolate(mid, to, right)
  }
  if (events.length === 0) return failed
  const whole = await tryPart(0, events.length)
  if (whole) {
    if (whole.suspect && events.length === 1) throw whole.err // alone, nothing tells it from an outage
    await isolate(0, events.length, whole)
  }
  return failed
}

/**
 * Calls arriving together (batches of several partitions, concurrent intakes) become one
 * write: calls arriving while a write is in flight wait and go together in the next one (up to
 * `maxEvents` and `maxBytes`, never splitting a call). Each caller learns the fate of its own
 * events: a transient failure rejects every caller of the write (each retries), while events
 * that can never be written are isolated and returned to the caller they came from, so one
 * caller's bad row neither blocks nor dead-letters another's. A partition commits only its own
 * offsets, and only after the write. An isolating write (`{isolate: true}`) goes alone.
 */
export function coalesce(handler: EventHandler, limits: WriteLimits): BatchWriter {
  type Call = {
    events: TallyEvent[]
    bytes: number
    resolve: (failed: Unrecordable[]) => void
    reject: (err: unknown) => void
  }
  let queue: Call[] = []
  let writing = false

  const next = () => {
    if (writing || queue.length === 0) return
    let n = 0
    let size = 0
    let bytes = 0
    while (
      n < queue.length &&
      (n === 0 ||
        (size + (queue[n] as Call).events.length <= limits.maxEvents &&
          bytes + (queue[n] as Call).bytes <= limits.maxBytes))
    ) {
      size += (queue[n] as Call).events.length
      bytes += (queue[n] as Call).bytes
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
                .map((f) => ({ ...f, index: f.index - start })),
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
    write(events, options) {
      if (options?.isolate) return Promise.resolve().then(() => writeIsolating(handler, events, true))
      return new Promise<Unrecordable[]>((resolve, reject) => {
        const bytes = events.reduce((sum, e) => sum + eventSize(e), 0)
        queue.push({ events, bytes, resolve, reject })
        // After the current tick, so that batches decoded together share the write.
        setImmediate(next)
      })
    },
  }
}
