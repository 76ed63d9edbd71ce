import { INSERTS_TABLE, ROLLUP_COLUMNS, ROLLUP_TABLE } from '../../shared/clickhouse/request-hours.ts'
import { REQUEST_TABLE } from '../../shared/clickhouse/request-table.ts'
import type { CompiledFilter } from '../../shared/filters/compile.ts'
import { bucketSql, type Granularity } from './buckets.ts'
import { DIMENSIONS, MEASURES, type Measure } from './schema.ts'

interface Statement {
  query: string
  query_params: Record<string, unknown>
}

const HOUR_MS = 3_600_000
/**
 * Stretches of a window read from the rollup or raw, one condition each; with more of either,
 * the window is read raw whole.
 */
const MAX_RANGES = 48

export interface MetricsQuery {
  organizationId: string
  startMs: number
  endMs: number
  timezoneDifference: number
  filter: CompiledFilter
  measures: Measure[]
  dimensions: string[]
  granularity: Granularity
  limit: number
}

/** The grouping column of a dimension: a fixed column, or the properties map at a bound key. */
function dimensionColumn(name: string, i: number, params: Record<string, unknown>): string {
  if (Object.hasOwn(DIMENSIONS, name)) return DIMENSIONS[name as keyof typeof DIMENSIONS]
  params[`dim_key_${i}`] = name.slice('property.'.length)
  return `properties[{dim_key_${i}:String}]`
}

/** The rows a metrics statement groups, and how it reads them. */
interface Rows {
  /** A WITH clause the statement starts with, if any. */
  with?: string
  /** What the grouped SELECT and the top-N subqueries read: `FROM … [WHERE …]`. */
  from: string
  /** Each measure over these rows. */
  measure: (m: Measure) => string
  /** The number of requests over these rows. */
  count: string
  /** The column holding a row's time. */
  time: string
}

/**
 * One statement, one scan of `rows`: GROUPING SETS give the cells (bucket × series), each series'
 * totals and the grand totals at once; percentiles and distinct counts of totals are computed over
 * the rows, not summed from buckets. A dimension's value stays itself when it is among the top
 * `limit` by the first measure over the window (a subquery over the same rows), else NULL: the
 * "other" series. Every value the caller sent is a query parameter; names come from the closed
 * lists in schema.ts.
 */
function groupedStatement(q: MetricsQuery, rows: Rows, params: Record<string, unknown>): Statement {
  const rank = rows.measure(q.measures[0] as Measure)
  const dims = q.dimensions.map((name, i) => {
    const column = dimensionColumn(name, i, params)
    return `if(${column} IN (
      SELECT ${column} ${rows.from}
      GROUP BY ${column} ORDER BY ${rank} DESC, ${column} ASC LIMIT {top:UInt32}
    ), ${column}, NULL) AS d${i}`
  })
  const dimNames = q.dimensions.map((_, i) => `d${i}`)
  const measures = q.measures.map((m, i) => `${rows.measure(m)} AS m${i}`)
  const sets = dimNames.length
    ? `(bucket, ${dimNames.join(', ')}), (${dimNames.join(', ')}), ()`
    : '(bucket), ()'
  return {
    query: `${rows.with ?? ''}
SELECT
  ${bucketSql(q.granularity, rows.time)} AS bucket,
  ${[...dims, ...measures].join(',\n  ')},
  ${rows.count} AS n,
  grouping(bucket) AS all_buckets,
  ${dimNames.length ? `grouping(${dimNames[0]})` : '1'} AS all_series
${rows.from}
GROUP BY GROUPING SETS (${sets})`,
    query_params: params,
  }
}

/** The metrics statement over the raw rows of the window (FINAL: a redelivered request counts once). */
function rawStatement(q: MetricsQuery): Statement {
  const params: Record<string, unknown> = {
    ...q.filter.params,
    org: q.organizationId,
    start: q.startMs,
    end: q.endMs,
    tz_minutes: q.timezoneDifference,
    top: q.limit,
  }
  const from = `FROM ${REQUEST_TABLE} FINAL
WHERE organization_id = {org:UUID}
    AND request_created_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
    AND request_created_at < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
    AND (${q.filter.sql})`
  return groupedStatement(
    q,
    { from, measure: (m) => MEASURES[m].sql, count: 'count()', time: 'request_created_at' },
    params,
  )
}

/** The rollup's grouping columns; the dimensions of the same names group by them. */
const ROLLUP_SET = new Set<string>(ROLLUP_COLUMNS)

/** The whole hours of the window, as [first, end) in Unix ms. */
function wholeHours(q: MetricsQuery): [number, number] {
  return [Math.ceil(q.startMs / HOUR_MS) * HOUR_MS, Math.floor(q.endMs / HOUR_MS) * HOUR_MS]
}

/**
 * The statement answering, in one row, the window's whole hours (Unix seconds) whose newest
 * rollup build answers for exactly the rows written (accepted_rows, request-hours.ts); undefined when the query cannot
 * use the rollup: a dimension or filter on something it does not keep, minute buckets, or an
 * offset that is not whole hours.
 */
export function freshHoursStatement(q: MetricsQuery): Statement | undefined {
  const usable =
    q.granularity !== 'minute' &&
    q.timezoneDifference % 60 === 0 &&
    q.dimensions.every((d) => ROLLUP_SET.has(d)) &&
    [...q.filter.columns].every((c) => ROLLUP_SET.has(c))
  const [first, end] = wholeHours(q)
  if (!usable || first >= end) return undefined
  const range = `hour >= toDateTime({first:UInt32}, 'UTC') AND hour < toDateTime({end:UInt32}, 'UTC')`
  return {
    query: `
SELECT groupArray(toUInt32(b.hour)) AS hours
FROM (
  SELECT hour, argMax(accepted_rows, build) AS accepted FROM ${ROLLUP_TABLE}
  WHERE organization_id = {org:UUID} AND is_total = 1 AND ${range}
  GROUP BY hour
) AS b
INNER JOIN (
  SELECT hour, sum(rows) AS rows FROM ${INSERTS_TABLE}
  WHERE organization_id = {org:UUID} AND ${range}
  GROUP BY hour
) AS i ON b.hour = i.hour
WHERE b.accepted = i.rows`,
    query_params: { org: q.organizationId, first: first / 1000, end: end / 1000 },
  }
}

/**
 * The window split at the fresh hours (Unix seconds): the stretches of whole fresh hours, and the
 * stretches between them, both as [from, to) in Unix ms.
 */
function split(
  q: MetricsQuery,
  freshHours: number[],
): { fresh: [number, number][]; stale: [number, number][] } {
  const hours = freshHours.map((h) => h * 1000).sort((a, b) => a - b)
  const fresh: [number, number][] = []
  const stale: [number, number][] = []
  let at = q.startMs
  for (const h of hours) {
    if (h < at || h + HOUR_MS > q.endMs) continue
    if (h > at) stale.push([at, h])
    const last = fresh.at(-1)
    if (last && last[1] === h) last[1] = h + HOUR_MS
    else fresh.push([h, h + HOUR_MS])
    at = h + HOUR_MS
  }
  if (at < q.endMs) stale.push([at, q.endMs])
  return { fresh, stale }
}

/** `column` in any of the ranges, each bound a parameter named after `name`. */
function inRanges(
  column: string,
  ranges: [number, number][],
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
 * The columns of a rollup row a measure may read, each with the same from raw rows: both sides of
 * the union give them under these names, so the outer query aggregates them alike. Only the
 * columns the measures read are carried.
 */
const FROM_RAW: Record<string, string> = {
  requests: 'count()',
  cost: 'sum(cost)',
  prompt_tokens: 'sum(prompt_tokens)',
  completion_tokens: 'sum(completion_tokens)',
  total_tokens: 'sum(total_tokens)',
  latency_sum: 'sum(latency)',
  latencies: 'groupArray(latency)',
  errors: 'countIf(status < 200 OR status >= 400)',
  users: "uniqExactStateIf(user_id, user_id != '')",
  sessions: "uniqExactStateIf(session_id, session_id != '')",
}

/** Each measure over the source: the same value as MEASURES' over raw rows (same types, same order of operations). */
const OVER_SOURCE: Record<Measure, { sql: string; reads: string[] }> = {
  count: { sql: 'sum(requests)', reads: ['requests'] },
  cost_sum: { sql: 'sum(cost)', reads: ['cost'] },
  prompt_tokens_sum: { sql: 'sum(prompt_tokens)', reads: ['prompt_tokens'] },
  completion_tokens_sum: { sql: 'sum(completion_tokens)', reads: ['completion_tokens'] },
  total_tokens_sum: { sql: 'sum(total_tokens)', reads: ['total_tokens'] },
  latency_avg: { sql: 'sum(latency_sum) / sum(requests)', reads: ['latency_sum'] },
  latency_p50: { sql: 'quantileExactArray(0.5)(latencies)', reads: ['latencies'] },
  latency_p95: { sql: 'quantileExactArray(0.95)(latencies)', reads: ['latencies'] },
  latency_p99: { sql: 'quantileExactArray(0.99)(latencies)', reads: ['latencies'] },
  error_rate: { sql: 'sum(errors) / sum(requests)', reads: ['errors'] },
  users_uniq: { sql: 'uniqExactMerge(users)', reads: ['users'] },
  sessions_uniq: { sql: 'uniqExactMerge(sessions)', reads: ['sessions'] },
}

/**
 * The metrics statement. Given the fresh hours (freshHoursStatement's answer), it reads those
 * hours from the rollup and the rest of the window (partial hours at its edges, hours not built
 * or written to since) from the raw rows, aggregated the same way; without them, or when the
 * stale stretches are too many, the raw rows alone. Either way the answer is the same.
 */
export function metricsStatement(q: MetricsQuery, freshHours?: number[]): Statement {
  const { fresh, stale } = split(q, freshHours ?? [])
  if (fresh.length === 0 || Math.max(fresh.length, stale.length) > MAX_RANGES) return rawStatement(q)
  const params: Record<string, unknown> = {
    ...q.filter.params,
    org: q.organizationId,
    tz_minutes: q.timezoneDifference,
    top: q.limit,
  }
  const carried = [...new Set(['requests', ...q.measures.flatMap((m) => OVER_SOURCE[m].reads)])]
  const freshHour = inRanges('hour', fresh, 'fresh', 'hour', params)
  // Each fresh hour's newest build, whichever it is now: every build is a whole, deduplicated
  // count of its hour at the time it read it.
  const rollupSide = `
  SELECT toDateTime64(hour, 3, 'UTC') AS at, ${ROLLUP_COLUMNS.join(', ')},
    ${carried.join(', ')}
  FROM ${ROLLUP_TABLE}
  WHERE organization_id = {org:UUID} AND is_total = 0 AND (${freshHour})
    AND (hour, build) IN (
      SELECT hour, max(build) FROM ${ROLLUP_TABLE}
      WHERE organization_id = {org:UUID} AND is_total = 1 AND (${freshHour})
      GROUP BY hour)
    AND (${q.filter.sql})`
  const rawSides = stale.length
    ? `
  UNION ALL
  SELECT toDateTime64(toStartOfHour(request_created_at), 3, 'UTC') AS at, ${ROLLUP_COLUMNS.join(', ')},
    ${carried.map((c) => `${FROM_RAW[c]} AS ${c}`).join(', ')}
  FROM ${REQUEST_TABLE} FINAL
  WHERE organization_id = {org:UUID}
    AND (${inRanges('request_created_at', stale, 'raw', 'ms', params)})
    AND (${q.filter.sql})
  GROUP BY at, ${ROLLUP_COLUMNS.join(', ')}`
    : ''
  return groupedStatement(
    q,
    {
      with: `WITH source AS (${rollupSide}${rawSides}
)`,
      from: 'FROM source',
      measure: (m) => OVER_SOURCE[m].sql,
      count: 'sum(requests)',
      time: 'at',
    },
    params,
  )
}
