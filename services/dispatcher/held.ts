/**
 * What a dispatcher process holds: deliveries queued, in flight, or with their outcome not yet
 * written, fresh ones (handed over by the event handler) apart from due retries (claimed by the
 * poller). A delivery counts as held until its outcome is written, so when outcomes are written
 * slower than attempts end, claiming waits for the writes: back-pressure, not a growing queue.
 */
export function createHeld(maxHeld: number) {
  const count = { fresh: 0, retry: 0 }
  const idle = new Set<() => void>()
  const total = () => count.fresh + count.retry

  return {
    add(n: number, fresh: boolean): void {
      count[fresh ? 'fresh' : 'retry'] += n
    },

    release(n: number, fresh: boolean): void {
      count[fresh ? 'fresh' : 'retry'] -= n
      if (total() > 0) return
      for (const resolve of idle) resolve()
      idle.clear()
    },

    /** How many fresh deliveries may be taken now. */
    room: () => Math.max(0, maxHeld - total()),

    /** How many due deliveries may be claimed now: retries get half of what a process holds, at most. */
    claimRoom: () => Math.min(500, Math.floor(maxHeld / 2) - count.retry, maxHeld - total()),

    /** Resolves once nothing is held. */
    idle: (): Promise<void> =>
      total() === 0 ? Promise.resolve() : new Promise((resolve) => idle.add(resolve)),
  }
}
