import { REQUEST_TABLE } from '../../shared/clickhouse/request-table.ts'
import type { CompiledFilter } from '../../shared/filters/compile.ts'
import { bucketSql, type Granularity } from './buckets.ts'
import { DIMENSIONS, MEASURES, type Measure } from './schema.ts'

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

/**
 * One statement, one scan: GROUPING SETS give the cells (bucket × series), each series' totals
 * and the grand totals at once; percentiles and distinct counts of totals are computed over the
 * rows, not summed from buckets. A dimension's value stays itself when it is among the top
 * `limit` by the first measure over the window (a subquery over the same rows), else NULL: the
 * "other" series. Every value the caller sent is a query parameter; names come from the closed
 * lists in schema.ts.
 */
export function metricsStatement(q: MetricsQuery): { query: string; query_params: Record<string, unknown> } {
  const params: Record<string, unknown> = {
    ...q.filter.params,
    org: q.organizationId,
    start: q.startMs,
    end: q.endMs,
    tz_minutes: q.timezoneDifference,
    top: q.limit,
  }
  const where = `organization_id = {org:UUID}
    AND request_created_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
    AND request_created_at < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
    AND (${q.filter.sql})`
  const rank = MEASURES[q.measures[0] as Measure].sql
  const dims = q.dimensions.map((name, i) => {
    const column = dimensionColumn(name, i, params)
    return `if(${column} IN (
      SELECT ${column} FROM ${REQUEST_TABLE} FINAL WHERE ${where}
      GROUP BY ${column} ORDER BY ${rank} DESC, ${column} ASC LIMIT {top:UInt32}
    ), ${column}, NULL) AS d${i}`
  })
  const dimNames = q.dimensions.map((_, i) => `d${i}`)
  const measures = q.measures.map((m, i) => `${MEASURES[m].sql} AS m${i}`)
  const sets = dimNames.length
    ? `(bucket, ${dimNames.join(', ')}), (${dimNames.join(', ')}), ()`
    : '(bucket), ()'
  return {
    query: `
SELECT
  ${bucketSql(q.granularity)} AS bucket,
  ${[...dims, ...measures].join(',\n  ')},
  count() AS n,
  grouping(bucket) AS all_buckets,
  ${dimNames.length ? `grouping(${dimNames[0]})` : '1'} AS all_series
FROM ${REQUEST_TABLE} FINAL
WHERE ${where}
GROUP BY GROUPING SETS (${sets})`,
    query_params: params,
  }
}
