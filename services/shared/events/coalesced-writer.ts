import type { RequestEvent } from './request-event.ts'
import type { BatchWriter, EventHandler, Unrecordable } from './transport.ts'

/**
 * Writes `events`; when the handler calls a failure permanent, halves the batch until each
 * failing event stands alone, writing every part that succeeds. So one bad row costs about
 * 2·log2(n) small inserts instead of the whole batch. A transient failure rejects (the caller
 * retries the whole batch; parts already written are replaced, never doubled).
 */
async function writeIsolating(handler: EventHandler, events: RequestEvent[]): Promise<Unrecordable[]> {
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
