import type { Period } from './schemas.ts'

/** The length of a schedule's window: UTC hours and UTC days (UTC has no daylight saving). */
const PERIOD_MS: Record<Period, number> = { hourly: 3_600_000, daily: 86_400_000 }

/** The start of the period `at` falls in. */
export function periodStart(period: Period, at: Date): Date {
  const step = PERIOD_MS[period]
  return new Date(Math.floor(at.getTime() / step) * step)
}
