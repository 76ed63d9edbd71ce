import { METRIC_TOTALS, ROLLUP_COLUMNS, ROLLUP_TABLE } from '../../shared/clickhouse/request-hours.ts'
import { REQUEST_TABLE } from '../../shared/clickhouse/request-table.ts'
import type { CompiledFilter } from '../../shared/filters/compile.ts'
import {
  freshHoursStatement as freshHoursOf,
  inRanges,
  newestBuild,
  splitWindow,
  usableSplit,
} from '../rollups/interface.ts'
import { bucketSql, type Granularity } from './buckets.ts'
import { DIMENSIONS, MEASURES, type Measure } from './schema.ts'

interface Statement {
  query: string
  query_params: Record<string, unknown>
}

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

/**
 * The statement answering the window's whole hours (Unix seconds) the metrics rollup answers for
 * (services/api/rollups/interface.ts); undefined when the query cannot use the rollup: a
 * dimension or filter on something it does not keep, minute buckets, or an offset that is not
 * whole hours.
 */
export function freshHoursStatement(q: MetricsQuery): Statement | undefined {
  const usable =
    q.granularity !== 'minute' &&
    q.timezoneDifference % 60 === 0 &&
    q.dimensions.every((d) => ROLLUP_SET.has(d)) &&
    [...q.filter.columns].every((c) => ROLLUP_SET.has(c))
  return usable ? freshHoursOf(ROLLUP_TABLE, q.organizationId, q.startMs, q.endMs) : undefined
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
  const window = splitWindow(q.startMs, q.endMs, freshHours ?? [])
  if (!usableSplit(window)) return rawStatement(q)
  const { fresh, stale } = window
  const params: Record<string, unknown> = {
    ...q.filter.params,
    org: q.organizationId,
    tz_minutes: q.timezoneDifference,
    top: q.limit,
  }
  // The rollup's columns the measures read; the requests of stale hours give each under its name
  // as the build does (METRIC_TOTALS), so the outer query aggregates both sides alike.
  const carried = [...new Set(['requests', ...q.measures.flatMap((m) => OVER_SOURCE[m].reads)])]
  const freshHour = inRanges('hour', fresh, 'fresh', 'hour', params)
  const rollupSide = `
  SELECT toDateTime64(hour, 3, 'UTC') AS at, ${ROLLUP_COLUMNS.join(', ')},
    ${carried.join(', ')}
  FROM ${ROLLUP_TABLE}
  WHERE organization_id = {org:UUID} AND ${newestBuild(ROLLUP_TABLE, freshHour)}
    AND (${q.filter.sql})`
  const rawSides = stale.length
    ? `
  UNION ALL
  SELECT toDateTime64(toStartOfHour(request_created_at), 3, 'UTC') AS at, ${ROLLUP_COLUMNS.join(', ')},
    ${carried.map((c) => `${METRIC_TOTALS[c]} AS ${c}`).join(', ')}
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
