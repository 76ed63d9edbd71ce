import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toRow } from '../../services/shared/clickhouse/request-table.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { callApi } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

let tally: TestTally
let org: TestOrg
let other: TestOrg

const t = (iso: string) => new Date(iso)
const ms = (iso: string) => Date.parse(iso)
const HOURS = { startTimeUnixMs: ms('2026-11-01T00:00:00Z'), endTimeUnixMs: ms('2026-11-01T04:00:00Z') }

/** Hand-checked: the expected figures in the tests below are worked out from these rows. */
function fixture(organization_id: string, scale = 1): RequestEvent[] {
  const e = (o: Partial<RequestEvent>) =>
    sampleEvent({
      organization_id,
      prompt_tokens: 1,
      completion_tokens: 2,
      total_tokens: 3,
      properties: {},
      ...o,
    })
  return [
    e({
      created_at: t('2026-11-01T00:10:00Z'),
      model: 'gpt-4o',
      latency_ms: 100 * scale,
      cost_usd: 0.5 * scale,
      status: 200,
      user_id: 'u1',
      session_id: 's1',
      properties: { team: 'a' },
    }),
    e({
      created_at: t('2026-11-01T00:20:00Z'),
      model: 'gpt-4o',
      latency_ms: 300,
      cost_usd: 0.25,
      status: 500,
      user_id: 'u2',
      session_id: 's1',
      properties: { team: 'a' },
    }),
    e({
      created_at: t('2026-11-01T01:30:00Z'),
      model: 'claude',
      latency_ms: 200,
      cost_usd: 1,
      status: 200,
      user_id: 'u1',
      session_id: 's2',
      properties: { team: 'b' },
    }),
    e({
      created_at: t('2026-11-01T03:59:59.999Z'),
      model: 'mistral',
      latency_ms: 50,
      cost_usd: 0.125,
      status: 429,
      user_id: '',
      session_id: '',
    }),
    e({
      created_at: t('2026-11-01T03:00:00Z'),
      model: 'gpt-4o',
      latency_ms: 400,
      cost_usd: 0.125,
      status: 200,
      user_id: 'u3',
      session_id: 's3',
    }),
    // Outside the hourly window: exactly at its end, and just before its start.
    e({ created_at: t('2026-11-01T04:00:00Z'), model: 'gpt-4o', latency_ms: 9, cost_usd: 100, status: 200 }),
    e({
      created_at: t('2026-10-31T23:59:59.999Z'),
      model: 'gpt-4o',
      latency_ms: 9,
      cost_usd: 100,
      status: 200,
    }),
  ]
}

async function insert(events: RequestEvent[]) {
  await tally.clickhouse.insert({
    table: 'request_response_rmt',
    values: events.map(toRow),
    format: 'JSONEachRow',
  })
}

async function metrics(as: TestOrg, body: Record<string, unknown>) {
  return callApi(tally.app, 'POST', '/v1/metrics/query', { as, body: { timeFilter: HOURS, ...body } })
}

async function ok(body: Record<string, unknown>, as: TestOrg = org) {
  const res = await metrics(as, body)
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.error}`)
  return res.data
}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  other = await tally.newOrg()
  const rows = fixture(org.organizationId)
  await insert(rows)
  // A redelivered request (a separate insert, so a separate part): counted once.
  await insert([rows[0] as RequestEvent])
  // Another organization with the same shapes and larger numbers.
  await insert(fixture(other.organizationId, 1000))
})

afterAll(async () => {
  await tally?.close()
})

const HOUR_LABELS = ['00', '01', '02', '03'].map((h) => `2026-11-01T${h}:00:00.000+00:00`)

describe('POST /v1/metrics/query', () => {
  it('answers every measure per hour, zero-filled, with totals', async () => {
    const data = await ok({
      measures: [
        'count',
        'cost_sum',
        'latency_p50',
        'latency_p95',
        'latency_avg',
        'error_rate',
        'users_uniq',
        'sessions_uniq',
        'total_tokens_sum',
      ],
      granularity: 'hour',
    })
    expect(data.granularity).toBe('hour')
    expect(data.buckets).toEqual(HOUR_LABELS)
    expect(data.series).toEqual([
      {
        dimensions: {},
        totals: {
          count: 5,
          cost_sum: 2,
          latency_p50: 200,
          latency_p95: 400,
          latency_avg: 210,
          error_rate: 0.4,
          users_uniq: 3,
          sessions_uniq: 3,
          total_tokens_sum: 15,
        },
        values: {
          count: [2, 1, 0, 2],
          cost_sum: [0.75, 1, 0, 0.25],
          // quantileExact: the value at position floor(level × n) of the sorted latencies.
          latency_p50: [300, 200, null, 400],
          latency_p95: [300, 200, null, 400],
          latency_avg: [200, 200, null, 225],
          error_rate: [0.5, 0, null, 0.5],
          users_uniq: [2, 1, 0, 1],
          sessions_uniq: [1, 1, 0, 1],
          total_tokens_sum: [6, 3, 0, 6],
        },
      },
    ])
    expect(data.totals).toEqual(data.series[0].totals)
  })

  it('keeps the top N values of a dimension by the first measure and folds the rest into "other"', async () => {
    const byCount = await ok({
      measures: ['count', 'cost_sum'],
      dimensions: ['model'],
      granularity: 'hour',
      limit: 1,
    })
    expect(byCount.series).toEqual([
      {
        dimensions: { model: 'gpt-4o' },
        totals: { count: 3, cost_sum: 0.875 },
        values: { count: [2, 0, 0, 1], cost_sum: [0.75, 0, 0, 0.125] },
      },
      {
        dimensions: { model: null },
        totals: { count: 2, cost_sum: 1.125 },
        values: { count: [0, 1, 0, 1], cost_sum: [0, 1, 0, 0.125] },
      },
    ])
    expect(byCount.totals).toEqual({ count: 5, cost_sum: 2 })
    // Ranked by cost instead, claude (1.0) is ahead of gpt-4o (0.875).
    const byCost = await ok({ measures: ['cost_sum'], dimensions: ['model'], limit: 1 })
    expect(byCost.series.map((s: { dimensions: unknown }) => s.dimensions)).toEqual([
      { model: 'claude' },
      { model: null },
    ])
    // Without a limit that cuts, no "other": ties in the first measure keep value order.
    const all = await ok({ measures: ['count'], dimensions: ['model'] })
    expect(
      all.series.map((s: { dimensions: { model: string }; totals: unknown }) => [
        s.dimensions.model,
        s.totals,
      ]),
    ).toEqual([
      ['gpt-4o', { count: 3 }],
      ['claude', { count: 1 }],
      ['mistral', { count: 1 }],
    ])
  })

  it('groups by two dimensions, each with its own top N', async () => {
    const data = await ok({
      measures: ['count'],
      dimensions: ['model', 'status'],
      limit: 1,
      granularity: 'hour',
    })
    const series = data.series.map(
      (s: {
        dimensions: Record<string, string | null>
        totals: { count: number }
        values: { count: number[] }
      }) => [s.dimensions.model, s.dimensions.status, s.totals.count, s.values.count],
    )
    expect(series).toEqual([
      ['gpt-4o', '200', 2, [1, 0, 0, 1]],
      ['gpt-4o', null, 1, [1, 0, 0, 0]],
      [null, '200', 1, [0, 1, 0, 0]],
      [null, null, 1, [0, 0, 0, 1]],
    ])
  })

  it('groups by a property, missing as ""', async () => {
    const data = await ok({ measures: ['count'], dimensions: ['property.team'] })
    expect(
      data.series.map((s: { dimensions: unknown; totals: unknown }) => [s.dimensions, s.totals]),
    ).toEqual([
      [{ 'property.team': '' }, { count: 2 }],
      [{ 'property.team': 'a' }, { count: 2 }],
      [{ 'property.team': 'b' }, { count: 1 }],
    ])
  })

  it('aligns days, weeks and months to the caller offset', async () => {
    // UTC+01:30: the local day of 2026-11-01 runs from 2026-10-31T22:30Z; all seven rows fall in it.
    const days = await ok({
      measures: ['count'],
      granularity: 'day',
      timezoneDifference: -90,
      timeFilter: { startTimeUnixMs: ms('2026-10-31T00:00:00Z'), endTimeUnixMs: ms('2026-11-02T00:00:00Z') },
    })
    expect(days.buckets).toEqual([
      '2026-10-31T00:00:00.000+01:30',
      '2026-11-01T00:00:00.000+01:30',
      '2026-11-02T00:00:00.000+01:30',
    ])
    expect(days.series[0].values.count).toEqual([0, 7, 0])
    // In UTC the row at 23:59:59.999 belongs to October 31.
    const utcDays = await ok({
      measures: ['count'],
      granularity: 'day',
      timeFilter: { startTimeUnixMs: ms('2026-10-31T00:00:00Z'), endTimeUnixMs: ms('2026-11-02T00:00:00Z') },
    })
    expect(utcDays.series[0].values.count).toEqual([1, 6])
    // UTC−10:00: 2026-11-01T00:10Z is still Saturday October 31 there, so it starts the week of Monday Oct 26.
    const weeks = await ok({
      measures: ['count'],
      granularity: 'week',
      timezoneDifference: 600,
      timeFilter: { startTimeUnixMs: ms('2026-10-27T00:00:00Z'), endTimeUnixMs: ms('2026-11-10T00:00:00Z') },
    })
    expect(weeks.buckets).toEqual([
      '2026-10-26T00:00:00.000-10:00',
      '2026-11-02T00:00:00.000-10:00',
      '2026-11-09T00:00:00.000-10:00',
    ])
    expect(weeks.series[0].values.count).toEqual([7, 0, 0])
    const months = await ok({
      measures: ['count'],
      granularity: 'month',
      timeFilter: { startTimeUnixMs: ms('2026-10-01T00:00:00Z'), endTimeUnixMs: ms('2026-12-01T00:00:00Z') },
    })
    expect(months.buckets).toEqual(['2026-10-01T00:00:00.000+00:00', '2026-11-01T00:00:00.000+00:00'])
    expect(months.series[0].values.count).toEqual([1, 6])
  })

  it('chooses the granularity for auto and says which', async () => {
    // Four hours by minute would be 240 buckets, more than auto's 200.
    expect((await ok({ measures: ['count'] })).granularity).toBe('hour')
    const hour = { startTimeUnixMs: HOURS.startTimeUnixMs, endTimeUnixMs: HOURS.startTimeUnixMs + 3_600_000 }
    expect((await ok({ measures: ['count'], timeFilter: hour })).granularity).toBe('minute')
    const month = { startTimeUnixMs: ms('2026-10-01T00:00:00Z'), endTimeUnixMs: ms('2026-11-01T00:00:00Z') }
    expect((await ok({ measures: ['count'], timeFilter: month })).granularity).toBe('day')
  })

  it('applies the filter, and sees only the caller organization', async () => {
    const claude = await ok({
      measures: ['count', 'cost_sum'],
      filter: { request_response_rmt: { model: { equals: 'claude' } } },
    })
    expect(claude.totals).toEqual({ count: 1, cost_sum: 1 })
    const theirs = await ok({ measures: ['count', 'latency_p50'], dimensions: ['model'] }, other)
    expect(theirs.totals).toEqual({ count: 5, latency_p50: 300 })
    const stranger = await tally.newOrg()
    const none = await ok(
      { measures: ['count', 'latency_p95'], dimensions: ['model'], granularity: 'hour' },
      stranger,
    )
    expect(none).toEqual({
      granularity: 'hour',
      buckets: HOUR_LABELS,
      series: [],
      totals: { count: 0, latency_p95: null },
    })
  })

  it('takes hostile text as values: NUL, quotes and SQL in property keys and filters', async () => {
    const nul = await metrics(org, { measures: ['count'], dimensions: ['property.a\u0000b'] })
    expect(nul.status).toBe(400)
    expect(nul.error).toMatch(/^body\.dimensions\.0: /)
    for (const key of ["x') OR 1=1 --", 'a'.repeat(200), '{org:UUID}']) {
      const data = await ok({ measures: ['count'], dimensions: [`property.${key}`] })
      expect(data.series).toEqual([
        { dimensions: { [`property.${key}`]: '' }, totals: { count: 5 }, values: expect.any(Object) },
      ])
    }
    const filtered = await ok({
      measures: ['count'],
      filter: { request_response_rmt: { model: { equals: "gpt-4o' OR '1'='1" } } },
    })
    expect(filtered.totals).toEqual({ count: 0 })
  })

  it('answers 400 naming the field for bad input', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ measures: ['count', 'latency_p42'] }, /^body\.measures\.1: must be one of count, /],
      [{ measures: [] }, /^body\.measures: must name at least one measure/],
      [{ measures: ['count', 'count'] }, /^body\.measures: must not name a measure twice/],
      [{}, /^body\.measures: /],
      [{ measures: ['count'], dimensions: ['colour'] }, /^body\.dimensions\.0: must be one of model, /],
      [{ measures: ['count'], dimensions: ['constructor'] }, /^body\.dimensions\.0: must be one of model, /],
      [{ measures: ['count'], dimensions: ['__proto__'] }, /^body\.dimensions\.0: must be one of model, /],
      [{ measures: ['count'], dimensions: ['toString'] }, /^body\.dimensions\.0: must be one of model, /],
      [
        { measures: ['count'], dimensions: ['score.helpful'] },
        /^body\.dimensions\.0: score dimensions come with scores/,
      ],
      [{ measures: ['count'], dimensions: ['property.'] }, /^body\.dimensions\.0: /],
      [
        { measures: ['count'], dimensions: ['model', 'status', 'user_id'] },
        /^body\.dimensions: must name at most 2 dimensions/,
      ],
      [{ measures: ['count'], granularity: 'fortnight' }, /^body\.granularity: must be one of minute, /],
      [
        {
          measures: ['count'],
          timeFilter: { startTimeUnixMs: HOURS.endTimeUnixMs, endTimeUnixMs: HOURS.startTimeUnixMs },
        },
        /^body\.timeFilter\.endTimeUnixMs: must be after startTimeUnixMs/,
      ],
      [
        { measures: ['count'], timeFilter: { startTimeUnixMs: 1e300, endTimeUnixMs: 2e300 } },
        /^body\.timeFilter\.startTimeUnixMs: /,
      ],
      [
        { measures: ['count'], timeFilter: { startTimeUnixMs: -1, endTimeUnixMs: 5 } },
        /^body\.timeFilter\.startTimeUnixMs: must be on or after 1970-01-02/,
      ],
      [
        { measures: ['count'], timezoneDifference: 100_000 },
        /^body\.timezoneDifference: must be between -840 and 840/,
      ],
      [{ measures: ['count'], limit: 1e9 }, /^body\.limit: must be between 1 and 100/],
      [
        { measures: ['count'], filter: { request_response_rmt: { nope: { equals: 1 } } } },
        /^body\.filter\.request_response_rmt\.nope: /,
      ],
      [{ measures: ['count'], sql: 'SELECT 1' }, /^body: /],
      // 30 days by minute: 43,200 buckets.
      [
        {
          measures: ['count'],
          granularity: 'minute',
          timeFilter: {
            startTimeUnixMs: ms('2026-10-01T00:00:00Z'),
            endTimeUnixMs: ms('2026-10-31T00:00:00Z'),
          },
        },
        /^body\.granularity: minute makes more than 2000 buckets in this window/,
      ],
      // 101 × 101 series × 720 hours: the answer could not be held.
      [
        {
          measures: ['count'],
          dimensions: ['user_id', 'model'],
          limit: 100,
          granularity: 'hour',
          timeFilter: {
            startTimeUnixMs: ms('2026-10-01T00:00:00Z'),
            endTimeUnixMs: ms('2026-10-31T00:00:00Z'),
          },
        },
        /^body\.limit: 10201 series × 720 buckets × 1 measures may make 7344720 values, more than 500000/,
      ],
    ]
    for (const [body, error] of cases) {
      const res = await metrics(org, body)
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400)
      expect(res.data).toBeNull()
      expect(res.error).toMatch(error)
    }
    // Deep nesting of the filter is the compiler's 400 too.
    let deep: unknown = { request_response_rmt: { model: { equals: 'x' } } }
    for (let i = 0; i < 100; i++)
      deep = {
        left: deep,
        operator: 'and',
        right: deep === null ? {} : { request_response_rmt: { status: { equals: 200 } } },
      }
    const nested = await metrics(org, { measures: ['count'], filter: deep })
    expect(nested.status).toBe(400)
    expect(nested.error).toMatch(/^body\.filter/)
  })

  it('is in the OpenAPI document', async () => {
    const doc = await tally.app.inject({ method: 'GET', url: '/openapi.json' })
    const op = doc.json().paths['/v1/metrics/query'].post
    expect(op.operationId).toBe('queryMetrics')
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '422', '429']))
  })
})

describe('POST /v1/metrics/query under the query limits', () => {
  let limited: TestTally
  beforeAll(async () => {
    limited = await startTestTally({ env: { TALLY_QUERY_MAX_RESULT_ROWS: '3' } })
  })
  afterAll(async () => {
    await limited?.close()
  })

  it('answers 422 naming the limit', async () => {
    const mine = await limited.newOrg()
    await limited.clickhouse.insert({
      table: 'request_response_rmt',
      values: fixture(mine.organizationId).map(toRow),
      format: 'JSONEachRow',
    })
    const res = await callApi(limited.app, 'POST', '/v1/metrics/query', {
      as: mine,
      body: { timeFilter: HOURS, measures: ['count'], dimensions: ['model'], granularity: 'hour' },
    })
    expect(res.status).toBe(422)
    expect(res.error).toMatch(/^query exceeded max_result_rows \(3 rows\)/)
  })
})
