import { z } from 'zod'
import { filterNode } from '../../shared/filters/schema.ts'
import { timeWindow } from '../http/inputs.ts'
import { GRANULARITIES } from './buckets.ts'

/**
 * What POST /v1/metrics/query can measure, each one ClickHouse aggregate over request_response_rmt.
 * Percentiles are exact (quantileExact: the value at 0-based position floor(level × n) of the
 * sorted latencies, no interpolation); distinct counts are exact too (uniqExact). `empty` is what
 * a bucket without requests shows: 0 for counts and sums, null where there is nothing to average.
 */
export const MEASURES = {
  count: { sql: 'count()', empty: 0 },
  cost_sum: { sql: 'sum(cost)', empty: 0 },
  prompt_tokens_sum: { sql: 'sum(prompt_tokens)', empty: 0 },
  completion_tokens_sum: { sql: 'sum(completion_tokens)', empty: 0 },
  total_tokens_sum: { sql: 'sum(total_tokens)', empty: 0 },
  latency_avg: { sql: 'avg(latency)', empty: null },
  latency_p50: { sql: 'quantileExact(0.5)(latency)', empty: null },
  latency_p95: { sql: 'quantileExact(0.95)(latency)', empty: null },
  latency_p99: { sql: 'quantileExact(0.99)(latency)', empty: null },
  error_rate: { sql: 'countIf(status < 200 OR status >= 400) / count()', empty: null },
  users_uniq: { sql: "uniqExactIf(user_id, user_id != '')", empty: 0 },
  sessions_uniq: { sql: "uniqExactIf(session_id, session_id != '')", empty: 0 },
} as const satisfies Record<string, { sql: string; empty: 0 | null }>

export type Measure = keyof typeof MEASURES
const MEASURE_NAMES = Object.keys(MEASURES) as [Measure, ...Measure[]]

/** Dimensions by name and the column (as text) each groups by; `property.<key>` is the map's key. */
export const DIMENSIONS = {
  model: 'model',
  provider: 'provider',
  status: 'toString(status)',
  user_id: 'user_id',
  session_id: 'session_id',
  prompt_id: 'prompt_id',
  prompt_version: 'prompt_version',
} as const
const DIMENSION_NAMES = Object.keys(DIMENSIONS)

const MAX_DIMENSIONS = 2
const MAX_MEASURES = 10
export const MAX_BUCKETS = 2_000
/** Series × buckets × measures an answer may hold at most (its size, whatever the data). */
export const MAX_VALUES = 500_000

const MIN_MS = Date.UTC(1970, 0, 2)
const MAX_MS = Date.UTC(2100, 0, 1)

const unixMs = z
  .number('must be Unix milliseconds (a number)')
  .int('must be a whole number of milliseconds')
  .min(MIN_MS, 'must be on or after 1970-01-02')
  .max(MAX_MS, 'must be on or before 2100-01-01')

const dimension = z
  .string('must be a string')
  .max(210, 'must be at most 210 characters')
  .superRefine((name, ctx) => {
    if (Object.hasOwn(DIMENSIONS, name)) return
    if (name.startsWith('property.') && name.length > 'property.'.length) return
    ctx.addIssue({
      code: 'custom',
      message: name.startsWith('score.')
        ? 'score dimensions come with scores, which Tally does not record yet'
        : `must be one of ${DIMENSION_NAMES.join(', ')} or property.<key>`,
    })
  })

export const metricsQueryBody = z
  .strictObject({
    timeFilter: timeWindow(unixMs),
    timezoneDifference: z
      .number('must be a number of minutes')
      .int('must be a whole number of minutes')
      .min(-840, 'must be between -840 and 840 (UTC+14:00 to UTC−14:00)')
      .max(840, 'must be between -840 and 840 (UTC+14:00 to UTC−14:00)')
      .default(0)
      .describe(
        'Minutes, getTimezoneOffset() convention (UTC+2 is -120): where days, weeks and months start',
      ),
    filter: filterNode.default({}).describe('The filter tree of POST /v1/request/query (docs/sessions.md)'),
    measures: z
      .array(z.enum(MEASURE_NAMES, `must be one of ${MEASURE_NAMES.join(', ')}`), 'must be an array')
      .min(1, 'must name at least one measure')
      .max(MAX_MEASURES, `must name at most ${MAX_MEASURES} measures`)
      .refine((m) => new Set(m).size === m.length, 'must not name a measure twice')
      .describe('The first one ranks dimension values for the top N'),
    dimensions: z
      .array(dimension, 'must be an array')
      .max(MAX_DIMENSIONS, `must name at most ${MAX_DIMENSIONS} dimensions`)
      .refine((d) => new Set(d).size === d.length, 'must not name a dimension twice')
      .default([])
      .describe(`Up to ${MAX_DIMENSIONS}: ${DIMENSION_NAMES.join(', ')}, property.<key>`),
    granularity: z
      .enum([...GRANULARITIES, 'auto'], `must be one of ${[...GRANULARITIES, 'auto'].join(', ')}`)
      .default('auto')
      .describe(`auto: the finest that makes at most 200 buckets; at most ${MAX_BUCKETS} buckets`),
    limit: z
      .number('must be a number')
      .int('must be a whole number')
      .min(1, 'must be between 1 and 100')
      .max(100, 'must be between 1 and 100')
      .default(10)
      .describe('Top N values per dimension by the first measure; the rest are one "other" series'),
  })
  .meta({ id: 'MetricsQuery' })

export type MetricsQueryBody = z.infer<typeof metricsQueryBody>

const value = z.number().nullable()
const measureValues = z.partialRecord(z.enum(MEASURE_NAMES), value)

export const metricsAnswer = z
  .object({
    granularity: z.enum(GRANULARITIES),
    buckets: z.array(z.string()).describe('Bucket starts, ISO 8601 at the caller offset'),
    series: z.array(
      z.object({
        dimensions: z
          .record(z.string(), z.string().nullable())
          .describe('Each dimension\'s value; null: the "other" series (values beyond the top N)'),
        totals: measureValues.describe('Over the whole window'),
        values: z
          .partialRecord(z.enum(MEASURE_NAMES), z.array(value))
          .describe('One value per bucket; empty buckets 0 for counts and sums, null otherwise'),
      }),
    ),
    totals: measureValues.describe('Over every request in the window that passes the filter'),
  })
  .meta({ id: 'MetricsAnswer' })

export type MetricsAnswer = z.infer<typeof metricsAnswer>
