/** The queue is full for this organization (or for all): the intake answers 503 with Retry-After. */
export class PublishQueueFullError extends Error {
  readonly retryAfterSeconds: number
  constructor(message: string, retryAfterSeconds: number) {
    super(message)
    this.name = 'PublishQueueFullError'
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** Bytes held, in all and per organization: what the publish bounds are checked against. */
export function createByteAccount() {
  const byOrg = new Map<string, number>()
  let total = 0
  return {
    get total() {
      return total
    },
    of: (org: string) => byOrg.get(org) ?? 0,
    add(org: string, delta: number) {
      total += delta
      const left = (byOrg.get(org) ?? 0) + delta
      if (left > 0) byOrg.set(org, left)
      else byOrg.delete(org)
    },
  }
}

/** One part of a publish, waiting for a send: what it carries and how many bytes. */
export interface QueuedPart<M> {
  messages: M[]
  bytes: number
  /** Settles the publish it belongs to once every part was acknowledged, or at its first failure. */
  sent(): void
  failed(err: unknown): void
}

interface Waiting<M> extends QueuedPart<M> {
  org: string
}

/**
 * The producer's waiting room: publishes queued per organization and taken round robin, so one
 * organization's 10 MB bodies do not queue ahead of another's small events. Bounded in bytes,
 * in all and per organization: a publish that would pass either bound is refused at once
 * (PublishQueueFullError), unless its organization has nothing queued (the per-organization
 * bound never refuses a lone publish). Every publish has a deadline from the moment it is
 * queued: past it, it is taken off the queue (if still there) and fails.
 */
export function createPublishQueue<M>(options: {
  maxBytes: number
  maxBytesPerOrg: number
  /** How long a publish may wait in all, queued and sending. */
  timeoutMs: number
}) {
  const byOrg = new Map<string, Waiting<M>[]>()
  const held = createByteAccount()

  const remove = (part: Waiting<M>): boolean => {
    const list = byOrg.get(part.org)
    const i = list?.indexOf(part) ?? -1
    if (!list || i < 0) return false
    list.splice(i, 1)
    if (list.length === 0) byOrg.delete(part.org)
    held.add(part.org, -part.bytes)
    return true
  }

  return {
    get bytes() {
      return held.total
    },
    get size() {
      return byOrg.size
    },

    /**
     * Queues one publish's parts for `org`; resolves once all were sent, rejects at the first
     * failure or at the deadline. Throws PublishQueueFullError, queuing nothing, past a bound.
     */
    add(org: string, parts: { messages: M[]; bytes: number }[]): Promise<void> {
      const size = parts.reduce((sum, p) => sum + p.bytes, 0)
      const mine = held.of(org)
      const bytes = held.total
      if (mine > 0 && mine + size > options.maxBytesPerOrg)
        throw new PublishQueueFullError(
          `this organization already has ${mine} bytes waiting for Kafka (at most ${options.maxBytesPerOrg})`,
          1,
        )
      if (bytes > 0 && bytes + size > options.maxBytes)
        throw new PublishQueueFullError(
          `${bytes} bytes are waiting for Kafka (at most ${options.maxBytes})`,
          2,
        )
      return new Promise<void>((resolve, reject) => {
        let left = parts.length
        let settled = false
        const queued: Waiting<M>[] = []
        const fail = (err: unknown) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          for (const p of queued) remove(p)
          reject(err)
        }
        const timer = setTimeout(
          () =>
            fail(
              new Error(`no acknowledgement from Kafka within ${options.timeoutMs} ms (queued and sending)`),
            ),
          options.timeoutMs,
        )
        for (const p of parts) {
          const part: Waiting<M> = {
            ...p,
            org,
            sent: () => {
              if (--left > 0 || settled) return
              settled = true
              clearTimeout(timer)
              resolve()
            },
            failed: fail,
          }
          queued.push(part)
          const list = byOrg.get(org)
          if (list) list.push(part)
          else byOrg.set(org, [part])
          held.add(org, p.bytes)
        }
      })
    },

    /**
     * Takes parts for one send, up to `maxBytes` (always at least one), one organization's at a
     * time in turn; an organization served goes to the back of the line.
     */
    take(maxBytes: number): QueuedPart<M>[] {
      const taken: QueuedPart<M>[] = []
      let size = 0
      for (let served = true; served; ) {
        served = false
        for (const [org, list] of [...byOrg]) {
          const head = list[0] as Waiting<M>
          if (taken.length > 0 && size + head.bytes > maxBytes) continue
          remove(head)
          taken.push(head)
          size += head.bytes
          served = true
          // Round robin across sends too: whoever was served waits behind the others next time.
          if (byOrg.has(org)) {
            const rest = byOrg.get(org) as Waiting<M>[]
            byOrg.delete(org)
            byOrg.set(org, rest)
          }
        }
      }
      return taken
    },

    /** Fails everything queued (closing). */
    clear(err: unknown): void {
      for (const list of [...byOrg.values()]) for (const p of [...list]) p.failed(err)
    },
  }
}
