import { withDeadline } from '../deadline.ts'
import type { Logger } from '../logger.ts'
import type { ReadinessCheck } from './role.ts'

const TIMEOUT_MS = 3_000

/** What `/readyz` answers: ready when every check passed; each check's state by name. */
export interface Readiness {
  ready: boolean
  engines: Record<string, 'ok' | 'unavailable'>
  /** 'Not ready: …' naming what failed, when not ready. */
  error: string | null
}

/**
 * Runs every check at once, each within 3 s. The reasons (hosts, ports) go to the log, not to
 * the answer: `/readyz` is unauthenticated.
 */
export async function readiness(checks: readonly ReadinessCheck[], log: Logger): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await withDeadline(Promise.resolve().then(check), TIMEOUT_MS, 'no answer')
        return [name, 'ok'] as const
      } catch (err) {
        log.warn({ engine: name, err: (err as Error).message }, 'readiness_check_failed')
        return [name, 'unavailable'] as const
      }
    }),
  )
  const down = results.filter(([, state]) => state !== 'ok').map(([name]) => name)
  return {
    ready: down.length === 0,
    engines: Object.fromEntries(results),
    error: down.length === 0 ? null : `Not ready: ${down.join(', ')} unavailable`,
  }
}
