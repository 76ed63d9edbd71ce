import type { Logger } from '../shared/logger.ts'

/**
 * Claims due deliveries while it runs: as many as there is room for, again at once while each
 * claim fills the room, else after `pollMs`. Asleep because the process was full, it is woken by
 * `roomFreed()` once there is room for a good batch (`wakeAt`), not only when the timer fires.
 */
export function startPoller(options: {
  /** How many may be claimed now. */
  claimRoom: () => number
  /** Claims up to `limit` and hands them over; resolves with how many. */
  claim: (limit: number) => Promise<number>
  pollMs: number
  wakeAt: number
  log: Logger
}) {
  const { claimRoom, claim, pollMs, wakeAt, log } = options
  let running = true
  let full = false
  let wake: (() => void) | undefined

  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake?.(), pollMs)
      wake = () => {
        wake = undefined
        clearTimeout(timer)
        resolve()
      }
    })

  const loop = (async () => {
    while (running) {
      const room = claimRoom()
      let claimed = 0
      if (room > 0) {
        try {
          claimed = await claim(room)
        } catch (err) {
          log.error({ err }, 'webhook_claim_failed')
        }
      }
      if (running && (room <= 0 || claimed < room)) {
        full = room <= 0
        await sleep()
      }
    }
  })()

  return {
    roomFreed(): void {
      if (full && claimRoom() >= wakeAt) wake?.()
    },

    /** Claims nothing more; resolves once a claim under way has been handed over. */
    async stop(): Promise<void> {
      running = false
      wake?.()
      await loop
    },
  }
}
