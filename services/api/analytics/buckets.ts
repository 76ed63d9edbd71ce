/**
 * Time buckets aligned to the caller's offset: a day bucket starts at the caller's midnight, a week
 * on the caller's Monday, a month on the caller's first of the month. `timezoneDifference` is in
 * minutes, JavaScript getTimezoneOffset() convention (UTC+2 is -120), as in the session query.
 * The SQL side (sql.ts) computes the same starts from each row; these are the whole list, so empty
 * buckets can be answered as such.
 */

export const GRANULARITIES = ['minute', 'hour', 'day', 'week', 'month'] as const
export type Granularity = (typeof GRANULARITIES)[number]

const MINUTE = 60_000
const FIXED: Record<Exclude<Granularity, 'month'>, number> = {
  minute: MINUTE,
  hour: 60 * MINUTE,
  day: 24 * 60 * MINUTE,
  week: 7 * 24 * 60 * MINUTE,
}

/** The start of the caller-local bucket holding `local` (caller-local time written as if UTC). */
function floorLocal(local: number, granularity: Granularity): number {
  if (granularity === 'month') {
    const d = new Date(local)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  }
  if (granularity === 'week') {
    const day = Math.floor(local / FIXED.day) * FIXED.day
    const sinceMonday = (new Date(day).getUTCDay() + 6) % 7
    return day - sinceMonday * FIXED.day
  }
  return Math.floor(local / FIXED[granularity]) * FIXED[granularity]
}

function nextLocal(start: number, granularity: Granularity): number {
  if (granularity !== 'month') return start + FIXED[granularity]
  const d = new Date(start)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/**
 * The UTC starts (Unix ms) of every bucket that overlaps [startMs, endMs), or undefined once there
 * would be more than `cap`. The first and last may be partial: only the window's rows count.
 */
export function bucketStarts(
  startMs: number,
  endMs: number,
  timezoneDifference: number,
  granularity: Granularity,
  cap: number,
): number[] | undefined {
  const shift = timezoneDifference * MINUTE
  const starts: number[] = []
  for (let local = floorLocal(startMs - shift, granularity); local + shift < endMs; ) {
    if (starts.length === cap) return undefined
    starts.push(local + shift)
    local = nextLocal(local, granularity)
  }
  return starts
}

/** `auto`: the finest granularity that makes at most this many buckets. */
const AUTO_BUCKETS = 200

export function autoGranularity(startMs: number, endMs: number, timezoneDifference: number): Granularity {
  return (
    GRANULARITIES.find((g) => bucketStarts(startMs, endMs, timezoneDifference, g, AUTO_BUCKETS)) ?? 'month'
  )
}

/**
 * The SQL of one row's bucket start as Unix ms (Int64), the same instant bucketStarts gives:
 * the row's time moved to the caller's offset, floored there, moved back. `{tz_minutes:Int32}` is
 * the caller's timezoneDifference.
 */
export function bucketSql(granularity: Granularity, column: string): string {
  const local = `${column} - toIntervalMinute({tz_minutes:Int32})`
  const floored = {
    minute: `toStartOfMinute(${local})`,
    hour: `toStartOfHour(${local})`,
    day: `toStartOfDay(${local})`,
    week: `toMonday(${local})`,
    month: `toStartOfMonth(${local})`,
  }[granularity]
  return `toUnixTimestamp64Milli(toDateTime64(${floored}, 3, 'UTC')) + {tz_minutes:Int32} * 60000`
}
