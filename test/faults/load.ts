import { randomUUID } from 'node:crypto'
import type { Org } from './cluster.ts'

/** One attempt of a request: when it started, how long it took, what it was answered. */
interface Attempt {
  at: number
  ms: number
  /** 0: no answer (the connection failed or timed out). */
  status: number
  /** The API it was sent to. */
  api: string
}

/** One logical request: its events' ids, its attempts, and whether (when) it was acknowledged. */
interface Sent {
  ids: string[]
  attempts: Attempt[]
  ackedAt?: number
}

export interface LoadOptions {
  /** Requests started per second. */
  perSecond: number
  /** Events per request. */
  events: number
  /** Bytes of each event's request body (a JSON string of that length). */
  bodyBytes?: number
  /** Retry a refused request with the same ids, as a client should (after Retry-After, at most 2 s). */
  retry?: boolean
  /** Requests in flight at most; starts are skipped beyond. */
  maxInFlight?: number
  /** Each event in one of this many sessions (`s-0`, `s-1`, …); none by default. */
  sessions?: number
}

/**
 * A tenant sending to POST /v1/request/log at a steady rate, with ids of its own so that a retry
 * replaces rather than doubles. Records every attempt, and which ids were acknowledged (201).
 * Given several APIs, requests take them in turn and a retry goes to the next, as a client
 * behind a load balancer fails over.
 */
export function tenantLoad(api: string | string[], org: Org, options: LoadOptions) {
  const apis = Array.isArray(api) ? api : [api]
  let turn = 0
  const sent: Sent[] = []
  const maxInFlight = options.maxInFlight ?? 200
  const padding = options.bodyBytes ? 'x'.repeat(options.bodyBytes) : undefined
  let running = true
  let inFlight = 0
  const pending = new Set<Promise<void>>()

  const attempt = async (r: Sent, body: string) => {
    for (;;) {
      const at = Date.now()
      let status = 0
      let retryAfter = 1
      const to = apis[turn++ % apis.length] as string
      try {
        const res = await fetch(`${to}/v1/request/log`, {
          method: 'POST',
          headers: { ...org.headers, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(60_000),
        })
        status = res.status
        retryAfter = Number(res.headers.get('retry-after') ?? 1) || 1
        await res.arrayBuffer()
      } catch {
        status = 0
      }
      r.attempts.push({ at, ms: Date.now() - at, status, api: to })
      if (status === 201) {
        r.ackedAt = Date.now()
        return
      }
      if (!running || options.retry === false) return
      // A client's own back-off before it sends the same ids again.
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryAfter * 1000, 2_000)))
      if (!running) return
    }
  }

  const startOne = () => {
    if (inFlight >= maxInFlight) return
    const ids = Array.from({ length: options.events }, () => randomUUID())
    // The same body on every attempt, its time included, as a client retrying must send it: a
    // retry that came with another created_at would be another row (the table's sorting key
    // holds it) whenever its first attempt landed after all and is not stored yet.
    const createdAt = Date.now()
    const body = JSON.stringify({
      events: ids.map((request_id, i) => ({
        request_id,
        created_at: createdAt,
        model: 'gpt-4o-mini',
        ...(options.sessions ? { session_id: `s-${(sent.length + i) % options.sessions}` } : {}),
        ...(padding ? { request: padding } : {}),
      })),
    })
    const r: Sent = { ids, attempts: [] }
    sent.push(r)
    inFlight++
    const p = attempt(r, body).finally(() => {
      inFlight--
      pending.delete(p)
    })
    pending.add(p)
  }
  const timer = setInterval(startOne, Math.max(1, Math.round(1000 / options.perSecond)))

  return {
    sent,
    /** Ids of every event acknowledged so far. */
    acked(): string[] {
      return sent.filter((r) => r.ackedAt !== undefined).flatMap((r) => r.ids)
    },
    /** Ids of every event ever sent (acknowledged or not). */
    attempted(): Set<string> {
      return new Set(sent.flatMap((r) => r.ids))
    },
    /** Attempts that started within [from, to). */
    attemptsBetween(from: number, to = Number.POSITIVE_INFINITY): Attempt[] {
      return sent.flatMap((r) => r.attempts).filter((a) => a.at >= from && a.at < to)
    },
    /** Stops starting requests; retries of those not acknowledged go on until `stop`. */
    pause() {
      clearInterval(timer)
    },
    /** Stops everything and waits for requests in flight. */
    async stop() {
      clearInterval(timer)
      running = false
      await Promise.allSettled([...pending])
    },
  }
}

/** The value below which `q` of the sorted numbers fall (nearest rank). */
export function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number
}
