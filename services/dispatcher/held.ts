/**
 * What a dispatcher process holds: deliveries queued, in flight, or with their outcome not yet
 * written, fresh ones (handed over by the event handler) apart from due retries (claimed by the
 * poller), counted and with the bytes of their bodies. A delivery counts as held until its
 * outcome is written, so when outcomes are written slower than attempts end, claiming waits for
 * the writes: back-pressure, not a growing queue; and one-megabyte bodies are held a few dozen
 * at a time, not a thousand.
 */
export function createHeld(maxHeld: number, maxBytes: number) {
  const count = { fresh: 0, retry: 0 }
  const bytes = { fresh: 0, retry: 0 }
  const idle = new Set<() => void>()
  const total = () => count.fresh + count.retry
  const totalBytes = () => bytes.fresh + bytes.retry
  const sizeOf = (deliveries: readonly { body: Buffer }[]) =>
    deliveries.reduce((sum, d) => sum + d.body.length, 0)

  return {
    add(deliveries: readonly { body: Buffer }[], fresh: boolean): void {
      count[fresh ? 'fresh' : 'retry'] += deliveries.length
      bytes[fresh ? 'fresh' : 'retry'] += sizeOf(deliveries)
    },

    release(deliveries: readonly { body: Buffer }[], fresh: boolean): void {
      count[fresh ? 'fresh' : 'retry'] -= deliveries.length
      bytes[fresh ? 'fresh' : 'retry'] -= sizeOf(deliveries)
      if (total() > 0) return
      for (const resolve of idle) resolve()
      idle.clear()
    },

    /** How many fresh deliveries, and how many bytes of their bodies, may be taken now. */
    room: () => ({ count: Math.max(0, maxHeld - total()), bytes: Math.max(0, maxBytes - totalBytes()) }),

    /**
     * How many due deliveries may be claimed now, and how many bytes of bodies: retries get half
     * of what a process holds, at most.
     */
    claimRoom: () => ({
      count: Math.min(500, Math.floor(maxHeld / 2) - count.retry, maxHeld - total()),
      bytes: Math.min(Math.floor(maxBytes / 2) - bytes.retry, maxBytes - totalBytes()),
    }),

    /** Resolves once nothing is held. */
    idle: (): Promise<void> =>
      total() === 0 ? Promise.resolve() : new Promise((resolve) => idle.add(resolve)),
  }
}
