interface Lane<J> {
  fresh: J[]
  retry: J[]
  /** Attempts in flight to this destination. */
  active: number
  /** Whether the lane is in the round-robin queue. */
  waiting: boolean
}

/**
 * Per-destination lanes of attempts: they start round robin over the destinations (origins) with
 * work, fresh deliveries before due retries within each, at most `perDestination` in flight to
 * one destination and `maxInFlight` in all, so one slow receiver cannot take every slot. `run`
 * is one attempt; it must not reject.
 */
export function createLanes<J>(options: {
  maxInFlight: number
  perDestination: number
  run: (job: J) => Promise<void>
}) {
  const { maxInFlight, perDestination, run } = options
  const lanes = new Map<string, Lane<J>>()
  const waiting: string[] = []
  let active = 0
  let open = true

  const queued = (lane: Lane<J>) => lane.fresh.length + lane.retry.length
  const enqueue = (key: string, lane: Lane<J>) => {
    if (lane.waiting) return
    lane.waiting = true
    waiting.push(key)
  }

  function pump(): void {
    while (open && active < maxInFlight && waiting.length > 0) {
      const key = waiting.shift() as string
      const lane = lanes.get(key)
      if (!lane) continue
      lane.waiting = false
      if (lane.active >= perDestination) continue // queued again when one of its attempts ends
      const job = lane.fresh.shift() ?? lane.retry.shift()
      if (job === undefined) continue
      lane.active++
      active++
      if (lane.active < perDestination && queued(lane) > 0) enqueue(key, lane)
      void run(job).then(() => {
        lane.active--
        active--
        if (queued(lane) > 0) enqueue(key, lane)
        else if (lane.active === 0) lanes.delete(key)
        pump()
      })
    }
  }

  return {
    /** Queues jobs, each to its destination, and starts what the limits allow. */
    add(jobs: { destination: string; job: J }[], fresh: boolean): void {
      for (const { destination, job } of jobs) {
        const key = originOf(destination)
        let lane = lanes.get(key)
        if (!lane) {
          lane = { fresh: [], retry: [], active: 0, waiting: false }
          lanes.set(key, lane)
        }
        lane[fresh ? 'fresh' : 'retry'].push(job)
        enqueue(key, lane)
      }
      pump()
    },

    /** Starts nothing more; returns the jobs not started. Attempts in flight run to their end. */
    close(): J[] {
      open = false
      const unstarted: J[] = []
      for (const lane of lanes.values()) {
        unstarted.push(...lane.fresh, ...lane.retry)
        lane.fresh = []
        lane.retry = []
      }
      return unstarted
    },
  }
}

function originOf(destination: string): string {
  try {
    return new URL(destination).origin
  } catch {
    return destination
  }
}
