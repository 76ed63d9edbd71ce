import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { type QueryLimits, readRows } from '../../shared/clickhouse/query-limits.ts'
import { INSERTS_TABLE } from '../../shared/clickhouse/request-hours.ts'

/**
 * Reading a rollup of closed hours (request-hours.ts) beside the raw rows: which whole hours of a
 * window a rollup answers for, the window split at them, and the conditions that select each
 * side. The metrics query (services/api/analytics/sql.ts) and the session list
 * (services/api/sessions/sql.ts) read their rollups this way.
 */

const HOUR_MS = 3_600_000
/**
 * Stretches of a window read from the rollup or raw, one condition each; with more of either,
 * the window is read raw whole.
 */
const MAX_RANGES = 48

/** A stretch of time, [from, to) in Unix ms. */
export type Range = [number, number]

/**
 * The statement answering, in one row (`hours`: Unix seconds), the window's whole hours whose
 * newest build of `table` answers for exactly the rows written (accepted_rows, request-hours.ts);
 * undefined when the window holds no whole hour.
 */
export function freshHoursStatement(
  table: string,
  organizationId: string,
  startMs: number,
  endMs: number,
): { query: string; query_params: Record<string, unknown> } | undefined {
  const first = Math.ceil(startMs / HOUR_MS) * HOUR_MS
  const end = Math.floor(endMs / HOUR_MS) * HOUR_MS
  // The rollups' hours are DateTime (1970 to 2106); windows reaching beyond read the raw rows.
  if (first >= end || first < 0 || end >= 2 ** 32 * 1000) return undefined
  const range = `hour >= toDateTime({first:UInt32}, 'UTC') AND hour < toDateTime({end:UInt32}, 'UTC')`
  return {
    query: `
SELECT groupArray(toUInt32(b.hour)) AS hours
FROM (
  SELECT hour, argMax(accepted_rows, build) AS accepted FROM ${table}
  WHERE organization_id = {org:UUID} AND is_total = 1 AND ${range}
  GROUP BY hour
) AS b
INNER JOIN (
  SELECT hour, sum(rows) AS rows FROM ${INSERTS_TABLE}
  WHERE organization_id = {org:UUID} AND ${range}
  GROUP BY hour
) AS i ON b.hour = i.hour
WHERE b.accepted = i.rows`,
    query_params: { org: organizationId, first: first / 1000, end: end / 1000 },
  }
}

/** The one row freshHoursStatement answers. */
const freshHoursRow = z.object({ hours: z.array(z.number().int().nonnegative()) })

/**
 * The hours (Unix seconds) a freshHoursStatement answers, run under the caller's query limits;
 * undefined without a statement (the window or the query cannot use the rollup).
 */
export async function readFreshHours(
  client: ClickHouseClient,
  limits: QueryLimits,
  statement: ReturnType<typeof freshHoursStatement>,
): Promise<number[] | undefined> {
  if (!statement) return undefined
  const [found] = await readRows(client, limits, statement)
  return freshHoursRow.parse(found).hours
}

/**
 * The window split at the fresh hours (Unix seconds): the stretches of whole fresh hours, and the
 * stretches between them.
 */
export function splitWindow(
  startMs: number,
  endMs: number,
  freshHours: readonly number[],
): { fresh: Range[]; stale: Range[] } {
  const hours = freshHours.map((h) => h * 1000).sort((a, b) => a - b)
  const fresh: Range[] = []
  const stale: Range[] = []
  let at = startMs
  for (const h of hours) {
    if (h < at || h + HOUR_MS > endMs) continue
    if (h > at) stale.push([at, h])
    const last = fresh.at(-1)
    if (last && last[1] === h) last[1] = h + HOUR_MS
    else fresh.push([h, h + HOUR_MS])
    at = h + HOUR_MS
  }
  if (at < endMs) stale.push([at, endMs])
  return { fresh, stale }
}

/** Whether a split reads the rollup at all and stays within MAX_RANGES conditions a side. */
export const usableSplit = ({ fresh, stale }: { fresh: Range[]; stale: Range[] }) =>
  fresh.length > 0 && Math.max(fresh.length, stale.length) <= MAX_RANGES

/**
 * `column` in any of the ranges, each bound a parameter (added to `params`) named after `name`:
 * `hour` columns are DateTime, `ms` columns DateTime64(3).
 */
export function inRanges(
  column: string,
  ranges: Range[],
  name: string,
  type: 'hour' | 'ms',
  params: Record<string, unknown>,
): string {
  const bound = (key: string) =>
    type === 'hour' ? `toDateTime({${key}:UInt32}, 'UTC')` : `fromUnixTimestamp64Milli({${key}:Int64}, 'UTC')`
  return ranges
    .map(([from, to], i) => {
      params[`${name}_from_${i}`] = type === 'hour' ? from / 1000 : from
      params[`${name}_to_${i}`] = type === 'hour' ? to / 1000 : to
      return `(${column} >= ${bound(`${name}_from_${i}`)} AND ${column} < ${bound(`${name}_to_${i}`)})`
    })
    .join('\n      OR ')
}

/**
 * The rows of `table` in the fresh hours (a condition on `hour`) that belong to each hour's newest
 * build, whichever it is now: every build is a whole, deduplicated aggregate of its hour at the
 * time it read it.
 */
export const newestBuild = (table: string, freshHour: string) => `is_total = 0 AND (${freshHour})
    AND (hour, build) IN (
      SELECT hour, max(build) FROM ${table}
      WHERE organization_id = {org:UUID} AND is_total = 1 AND (${freshHour})
      GROUP BY hour)`
