import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshHours, toQuery } from '../../services/api/analytics/routes.ts'
import { metricsQueryBody } from '../../services/api/analytics/schema.ts'
import { deleteOrganizationRows } from '../../services/shared/clickhouse/organization-rows.ts'
import { queryLimits } from '../../services/shared/clickhouse/query-limits.ts'
import { buildHour, buildStaleHours } from '../../services/shared/clickhouse/request-hours.ts'
import { toRow } from '../../services/shared/clickhouse/request-table.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { callApi } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// The metrics rollup (request_hours) answers exactly what the raw rows answer: every case below is
// asked before the rollup is built (raw rows only) and after (rollup, raw edges), and compared.

let tally: TestTally
let org: TestOrg

const ms = (iso: string) => Date.parse(iso)
// Hours in a day of their own, far from other test files' rows (the database is shared).
const DAY = '2025-03-'
const WINDOW = { startTimeUnixMs: ms(`${DAY}04T00:00:00Z`), endTimeUnixMs: ms(`${DAY}04T04:00:00Z`) }
// Every measure, in two bodies (at most 10 per query).
const SUMS = [
  'count',
  'cost_sum',
  'prompt_tokens_sum',
  'completion_tokens_sum',
  'total_tokens_sum',
  'error_rate',
]
const SPREADS = ['latency_avg', 'latency_p50', 'latency_p95', 'latency_p99', 'users_uniq', 'sessions_uniq']

const CASES: Record<string, Record<string, unknown>> = {
  'every measure by hour': { measures: SUMS, granularity: 'hour' },
  'every measure by hour, spreads': { measures: SPREADS, granularity: 'hour' },
  'by model, top 2 and other': { measures: ['count', 'latency_p95'], dimensions: ['model'], limit: 2 },
  'by provider and status': { measures: ['cost_sum', 'error_rate'], dimensions: ['provider', 'status'] },
  'ranked by a percentile': { measures: ['latency_p99', 'count'], dimensions: ['model'], limit: 1 },
  'a day bucket, UTC+2': { measures: SPREADS, granularity: 'day', timezoneDifference: -120 },
  'a filter on model': {
    measures: ['count', 'cost_sum'],
    granularity: 'hour',
    filter: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
  },
  'a window cut mid-hour': {
    measures: [...SPREADS, 'count', 'cost_sum'],
    granularity: 'hour',
    timeFilter: { startTimeUnixMs: ms(`${DAY}04T00:15:00Z`), endTimeUnixMs: ms(`${DAY}04T03:30:00Z`) },
  },
}

function rows(organization_id: string): RequestEvent[] {
  const out: RequestEvent[] = []
  const models = ['gpt-4o', 'claude', 'mistral']
  // 4 hours × 25 requests, latencies spread so every percentile picks a distinct row.
  for (let i = 0; i < 100; i += 1) {
    out.push(
      sampleEvent({
        organization_id,
        created_at: new Date(WINDOW.startTimeUnixMs + i * 144_000 + (i % 7) * 1000),
        model: models[i % 3] as string,
        provider: i % 2 ? 'openai' : 'anthropic',
        latency_ms: 10 + ((i * 37) % 101),
        cost_usd: (i % 8) / 8,
        status: i % 5 === 0 ? 500 : 200,
        prompt_tokens: i,
        completion_tokens: 2 * i,
        total_tokens: 3 * i,
        user_id: i % 4 === 0 ? '' : `u${i % 6}`,
        session_id: i % 3 === 0 ? '' : `s${i % 9}`,
        properties: { team: i % 2 ? 'a' : 'b' },
      }),
    )
  }
  return out
}

async function insert(events: RequestEvent[]) {
  await tally.clickhouse.insert({
    table: 'request_response_rmt',
    values: events.map(toRow),
    format: 'JSONEachRow',
  })
}

async function answer(body: Record<string, unknown>) {
  const res = await callApi(tally.app, 'POST', '/v1/metrics/query', {
    as: org,
    body: { timeFilter: WINDOW, ...body },
  })
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.error}`)
  return res.data
}

const limits = () => queryLimits(tally.config)

/** The hours the rollup would answer for this body. */
async function fresh(body: Record<string, unknown>) {
  const { query } = toQuery(org.organizationId, metricsQueryBody.parse({ timeFilter: WINDOW, ...body }))
  return (await freshHours(tally.clickhouse, limits(), query))?.map((h) => h * 1000).sort((a, b) => a - b)
}

// A second build confirms the first at once (10 s later in production).
const BUILD_LIMITS = { statementTimeoutMs: 60_000, memoryBytes: 2 ** 30, confirmAfterMs: 0 }

// Rounds as of the day after the window, looking two days back: only this file's hours (the
// database is shared with every test file) are built.
const ROUND_NOW = WINDOW.endTimeUnixMs + 86_400_000
const ROUND = {
  horizonMs: 2 * 86_400_000,
  settleMs: 0,
  maxHours: 10_000,
  maxHoursPerOrg: 10_000,
  ...BUILD_LIMITS,
}
const build = async () => (await buildStaleHours(tally.clickhouse, ROUND, { now: ROUND_NOW })).built

const events = () => rows(org.organizationId)
const rawAnswers: Record<string, unknown> = {}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  const all = events()
  await insert(all)
  // A redelivered request in a part of its own: counted once by raw reads and by the rollup.
  await insert([all[3] as RequestEvent])
  for (const [name, body] of Object.entries(CASES)) rawAnswers[name] = await answer(body)
  for (let i = 0; i < 5 && (await build()) > 0; i += 1) {}
})

afterAll(async () => {
  await tally?.close()
})

describe('the metrics rollup', () => {
  it('is built for every closed hour, and then answered from', async () => {
    expect(await fresh({ measures: ['count'] })).toEqual(
      [0, 1, 2, 3].map((h) => WINDOW.startTimeUnixMs + h * 3_600_000),
    )
  })

  for (const name of Object.keys(CASES)) {
    it(`answers as the raw rows do: ${name}`, async () => {
      expect(await answer(CASES[name] as Record<string, unknown>)).toEqual(rawAnswers[name])
    })
  }

  it('is not used where it cannot answer: property filters and dimensions, user_id, minutes, half-hour offsets', async () => {
    const measures = ['count']
    expect(await fresh({ measures, filter: { properties: { team: { equals: 'a' } } } })).toBeUndefined()
    expect(await fresh({ measures, dimensions: ['property.team'] })).toBeUndefined()
    expect(await fresh({ measures, dimensions: ['user_id'] })).toBeUndefined()
    expect(await fresh({ measures, granularity: 'minute' })).toBeUndefined()
    expect(await fresh({ measures, timezoneDifference: 30 })).toBeUndefined()
    expect(await fresh({ measures, timezoneDifference: -60 })).toHaveLength(4)
  })

  it('sends an hour written to after its build back to the raw rows, until it is built again', async () => {
    const late = sampleEvent({
      organization_id: org.organizationId,
      created_at: new Date(WINDOW.startTimeUnixMs + 3_600_000 + 60_000),
      model: 'gpt-4o',
      provider: 'openai',
      latency_ms: 5000,
      cost_usd: 4,
      status: 200,
      user_id: 'late',
      session_id: '',
      properties: {},
    })
    await insert([late])
    const hours = await fresh({ measures: ['count'] })
    expect(hours).toEqual([0, 2, 3].map((h) => WINDOW.startTimeUnixMs + h * 3_600_000))
    const body = CASES['every measure by hour'] as Record<string, unknown>
    const before = rawAnswers['every measure by hour'] as { totals: { count: number; cost_sum: number } }
    const withLate = await answer(body)
    expect(withLate.totals.count).toBe(before.totals.count + 1)
    expect(withLate.totals.cost_sum).toBe(before.totals.cost_sum + 4)
    const spreads = (await answer(CASES['every measure by hour, spreads'] as Record<string, unknown>)) as {
      series: { values: { latency_p99: number[] } }[]
    }
    // 26 latencies in that hour: position floor(0.99 × 26) = 25 is the largest, the late one.
    expect(spreads.series[0]?.values.latency_p99[1]).toBe(5000)
    expect(await build()).toBe(1)
    expect(await fresh({ measures: ['count'] })).toHaveLength(4)
    expect(await answer(body)).toEqual(withLate)
  })

  it('reads only the newest build of an hour', async () => {
    const hour = WINDOW.startTimeUnixMs + 2 * 3_600_000
    // Two more builds of the same hour (as two ingest processes, or a retry, would make).
    await buildHour(tally.clickhouse, org.organizationId, hour, BUILD_LIMITS)
    await buildHour(tally.clickhouse, org.organizationId, hour, BUILD_LIMITS)
    expect(await fresh({ measures: ['count'] })).toHaveLength(4)
    const now = await answer(CASES['every measure by hour'] as Record<string, unknown>)
    expect(now.series[0].values.count).toEqual([25, 26, 25, 25])
  })

  it('builds at most the per-organization share of a round, and goes on past a build that fails', async () => {
    const busy = await tally.newOrg()
    await insert(rows(busy.organizationId))
    const freshOf = async () => {
      const { query } = toQuery(
        busy.organizationId,
        metricsQueryBody.parse({ timeFilter: WINDOW, measures: ['count'] }),
      )
      return (await freshHours(tally.clickhouse, limits(), query))?.length
    }
    const round = (
      options: Partial<Parameters<typeof buildStaleHours>[1]>,
      run: Parameters<typeof buildStaleHours>[2] = {},
    ) => buildStaleHours(tally.clickhouse, { ...ROUND, ...options }, { now: ROUND_NOW, ...run })
    // Every build of this round fails: nothing is built, nothing is thrown, each failure is told.
    const failures: number[] = []
    const failing = await round(
      {},
      {
        admit: async () => {
          throw new Error('the engine refused the build')
        },
        failedBuild: (organizationId, hourMs) => {
          if (organizationId === busy.organizationId) failures.push(hourMs)
        },
      },
    )
    expect(failing.built).toBe(0)
    expect(failures).toHaveLength(4)
    expect(await freshOf()).toBe(0)
    // One hour per organization per round: the busy one gets one of its four.
    await round({ maxHoursPerOrg: 1 })
    expect(await freshOf()).toBe(1)
    for (let i = 0; i < 5 && (await round({})).built > 0; i += 1) {}
    expect(await freshOf()).toBe(4)
  })

  it('answers for an hour whose redelivered copy a merge removed, once a second build confirms it', async () => {
    const merged = await tally.newOrg()
    const hourRows = rows(merged.organizationId).slice(0, 20)
    await insert(hourRows)
    // Written again (a redelivery), then merged away before any build: the table holds 20 rows
    // where 21 were written.
    await insert([hourRows[5] as RequestEvent])
    await tally.clickhouse.command({ query: "OPTIMIZE TABLE request_response_rmt PARTITION '202503' FINAL" })
    const body = { timeFilter: WINDOW, measures: [...SUMS], granularity: 'hour' }
    const freshOf = async () => {
      const { query } = toQuery(merged.organizationId, metricsQueryBody.parse(body))
      return (await freshHours(tally.clickhouse, limits(), query))?.length
    }
    const ask = async () => {
      const res = await callApi(tally.app, 'POST', '/v1/metrics/query', { as: merged, body })
      expect(res.status, res.error ?? '').toBe(200)
      return res.data
    }
    const raw = await ask()
    expect(raw.totals.count).toBe(20)
    // The first build read 20 of 21: not answered from (a counted row might not be visible yet).
    await build()
    expect(await freshOf()).toBe(0)
    // The next one, with nothing written since, reads the same 20: the missing row was a copy.
    await build()
    expect(await freshOf()).toBe(1)
    expect(await ask()).toEqual(raw)
  })

  it('is deleted with its organization', async () => {
    const gone = await tally.newOrg()
    await insert(rows(gone.organizationId).slice(0, 10))
    await buildHour(tally.clickhouse, gone.organizationId, WINDOW.startTimeUnixMs, BUILD_LIMITS)
    const count = async (table: string) => {
      const rs = await tally.clickhouse.query({
        query: `SELECT count() AS n FROM ${table} WHERE organization_id = {org:UUID}`,
        query_params: { org: gone.organizationId },
        format: 'JSONEachRow',
      })
      return Number((await rs.json<{ n: string }>())[0]?.n)
    }
    expect(await count('request_hours')).toBeGreaterThan(0)
    expect(await count('request_hour_inserts')).toBeGreaterThan(0)
    await deleteOrganizationRows(tally.clickhouse, gone.organizationId)
    expect(await count('request_hours')).toBe(0)
    expect(await count('request_hour_inserts')).toBe(0)
  })
})
