import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { type QueryLimits, readRows } from '../../shared/clickhouse/query-limits.ts'
import { READ_SETTINGS } from '../../shared/clickhouse/request-table.ts'
import { badRequest } from '../../shared/errors.ts'
import { compileRequestFilter } from '../../shared/filters/compile.ts'
import { atCallerOffset } from '../../shared/timestamp.ts'
import { principalOf } from '../http/auth.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import type { QueryGate } from '../http/query-gate.ts'
import { readFreshHours } from '../rollups/interface.ts'
import { autoGranularity, bucketStarts } from './buckets.ts'
import {
  MAX_BUCKETS,
  MAX_VALUES,
  MEASURES,
  type Measure,
  type MetricsAnswer,
  type MetricsQueryBody,
  metricsAnswer,
  metricsQueryBody,
} from './schema.ts'
import { freshHoursStatement, type MetricsQuery, metricsStatement } from './sql.ts'

const number = z.coerce.number()
const row = z.looseObject({
  bucket: number,
  n: number,
  all_buckets: number,
  all_series: number,
})

/** The query the body asks for, or a 400 naming the field that makes it too large. */
export function toQuery(
  organizationId: string,
  body: MetricsQueryBody,
): { query: MetricsQuery; starts: number[] } {
  const { startTimeUnixMs: startMs, endTimeUnixMs: endMs } = body.timeFilter
  const granularity =
    body.granularity === 'auto' ? autoGranularity(startMs, endMs, body.timezoneDifference) : body.granularity
  const starts = bucketStarts(startMs, endMs, body.timezoneDifference, granularity, MAX_BUCKETS)
  if (!starts) {
    throw badRequest(
      `body.granularity: ${granularity} makes more than ${MAX_BUCKETS} buckets in this window; choose a coarser granularity or a shorter window`,
    )
  }
  const series = (body.limit + 1) ** body.dimensions.length
  const values = series * starts.length * body.measures.length
  if (values > MAX_VALUES) {
    throw badRequest(
      `body.limit: ${series} series × ${starts.length} buckets × ${body.measures.length} measures may make ${values} values, more than ${MAX_VALUES}; lower limit, or use fewer dimensions or measures, or a coarser granularity`,
    )
  }
  const filter = compileRequestFilter(body.filter, { path: 'body.filter' })
  return {
    starts,
    query: {
      organizationId,
      startMs,
      endMs,
      timezoneDifference: body.timezoneDifference,
      filter,
      measures: body.measures,
      dimensions: body.dimensions,
      granularity,
      limit: body.limit,
    },
  }
}

/** The window's hours (Unix seconds) the rollup answers (sql.ts), or undefined when the query cannot use it. */
export async function freshHours(
  client: ClickHouseClient,
  limits: QueryLimits,
  query: MetricsQuery,
): Promise<number[] | undefined> {
  return readFreshHours(client, limits, freshHoursStatement(query))
}

/** ClickHouse's rows (cells, series totals, grand totals) as zero-filled series. */
function toAnswer(q: MetricsQuery, starts: number[], rows: unknown[]): MetricsAnswer {
  const measuresOf = (r: Record<string, unknown>) =>
    Object.fromEntries(q.measures.map((m, i) => [m, r[`m${i}`] === null ? null : Number(r[`m${i}`])]))
  const empty = () => Object.fromEntries(q.measures.map((m) => [m, MEASURES[m].empty]))
  const index = new Map(starts.map((s, i) => [s, i]))
  const series = new Map<string, MetricsAnswer['series'][number]>()
  let totals: Record<string, number | null> = empty()
  const seriesOf = (r: Record<string, unknown>) => {
    const dims = q.dimensions.map((_, i) => (r[`d${i}`] ?? null) as string | null)
    const key = JSON.stringify(dims)
    let found = series.get(key)
    if (!found) {
      found = {
        dimensions: Object.fromEntries(q.dimensions.map((name, i) => [name, dims[i] ?? null])),
        totals: empty(),
        values: Object.fromEntries(
          q.measures.map((m) => [m, starts.map(() => MEASURES[m].empty as number | null)]),
        ),
      }
      series.set(key, found)
    }
    return found
  }
  for (const raw of rows) {
    const r = row.parse(raw)
    // Grouping sets answer the grand totals even over no rows, where quantiles say 0.
    if (r.all_buckets && r.all_series) totals = r.n === 0 ? empty() : measuresOf(r)
    else if (r.all_buckets) seriesOf(r).totals = measuresOf(r)
    else {
      const at = index.get(r.bucket)
      if (at === undefined) throw new Error(`metrics: bucket ${r.bucket} is not one of the window's`)
      const cell = measuresOf(r)
      const s = seriesOf(r)
      for (const m of q.measures) (s.values[m] as (number | null)[])[at] = cell[m] ?? null
    }
  }
  // Without dimensions there is one series, the whole window, whether or not it has rows.
  if (q.dimensions.length === 0) {
    const whole = seriesOf({})
    whole.totals = totals
  }
  const first = q.measures[0] as Measure
  type Series = MetricsAnswer['series'][number]
  const rank = (s: Series) => s.totals[first] ?? Number.NEGATIVE_INFINITY
  const others = (s: Series) => Object.values(s.dimensions).filter((v) => v === null).length
  // Values in order, "other" (null) after every value.
  const byValues = (a: Series, b: Series) => {
    for (const name of q.dimensions) {
      const x = a.dimensions[name] ?? null
      const y = b.dimensions[name] ?? null
      if (x === y) continue
      if (x === null) return 1
      if (y === null) return -1
      return x < y ? -1 : 1
    }
    return 0
  }
  // Series of top values first, then those with one "other", then two; each by the first measure.
  const ordered = [...series.values()].sort(
    (a, b) => others(a) - others(b) || rank(b) - rank(a) || byValues(a, b),
  )
  return {
    granularity: q.granularity,
    buckets: starts.map((s) => atCallerOffset(new Date(s).toISOString(), q.timezoneDifference)),
    series: ordered,
    totals,
  }
}

/** POST /v1/metrics/query: measures over time, by up to two dimensions, under the query limits. */
export function analyticsRoutes(
  client: ClickHouseClient,
  limits: QueryLimits,
  gate: QueryGate,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.post('/v1/metrics/query', {
      schema: {
        tags: ['metrics'],
        operationId: 'queryMetrics',
        summary: 'Measures over time by up to two dimensions, top N and "other", with totals',
        description:
          'Zero-filled buckets aligned to the caller offset; exact percentiles (quantileExact) and distinct counts (docs/metrics.md).',
        body: metricsQueryBody,
        response: responses({ 200: envelope(metricsAnswer) }, { body: true, query: true }),
      },
      handler: async (request) => {
        const { organizationId } = principalOf(request)
        const { query, starts } = toQuery(organizationId, request.body)
        return gate.run(organizationId, async () => {
          const rows = await readRows(client, limits, {
            ...metricsStatement(query, await freshHours(client, limits, query)),
            clickhouse_settings: READ_SETTINGS,
          })
          return ok(toAnswer(query, starts, rows))
        })
      },
    })
  }
}
