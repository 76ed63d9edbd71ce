import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSessions } from '../../bench/sessions-data.ts'
import { createSessionRepo } from '../../services/api/sessions/repo.ts'
import { sessionQueryBody, toQuery } from '../../services/api/sessions/routes.ts'
import { totalsHoursStatement } from '../../services/api/sessions/sql.ts'
import type { ClickHouseClient } from '../../services/shared/clickhouse/client.ts'
import { queryLimits } from '../../services/shared/clickhouse/query-limits.ts'
import { buildHour } from '../../services/shared/clickhouse/request-hours.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { count, insert, sessions } from './client.ts'

/**
 * The fast path (two passes, FINAL) against a naive reference written by hand: one GROUP BY over
 * rows deduplicated another way (latest ingested_at per request_id), on ~100k generated requests
 * of which 1% were re-ingested with a changed cost before any merge.
 */
let tally: TestTally
let org: TestOrg
let neighbour: TestOrg
const START = Date.UTC(2026, 9, 2)
const DAY = 86_400_000
const WINDOW = { startTimeUnixMs: START, endTimeUnixMs: START + 30 * DAY }

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  neighbour = await tally.newOrg()
  await generateSessions(tally.clickhouse, {
    organizations: [org.organizationId, neighbour.organizationId],
    requests: 100_000,
    perSession: 10,
    startMs: START,
    days: 30,
  })
  // 100 sessions with a request at hh:59 of each of the window's last 48 hours: the newest-first
  // shortcut sees them as the newest sessions unless it drops those reaching past its cut.
  await tally.clickhouse.command({
    query: `INSERT INTO request_response_rmt
              (organization_id, request_id, request_created_at, response_created_at, latency, provider, model,
               status, session_id, session_name, user_id, cost, prompt_tokens, completion_tokens, total_tokens)
            SELECT {org:UUID}, generateUUIDv4(number), t, t, 100 + number % 7, 'openai', 'gpt-4o', 200,
                   concat('long-', toString(number % 100)), 'Long', 'long-user', 1 / 1024, 1, 2, 3
            FROM (SELECT number, fromUnixTimestamp64Milli(toInt64({from:Int64} + intDiv(number, 100) * 3600000 + (number % 100) * 500), 'UTC') AS t
                  FROM numbers(4800))`,
    query_params: { org: org.organizationId, from: START + 28 * DAY + 59 * 60_000 },
  })
  await tally.clickhouse.command({
    query: `INSERT INTO request_response_rmt
            SELECT * REPLACE (cost * 2 AS cost, now64(3) + 1 AS ingested_at)
            FROM request_response_rmt WHERE organization_id = {org:UUID} AND cityHash64(request_id) % 100 = 0`,
    query_params: { org: org.organizationId },
  })
}, 120_000)
afterAll(() => tally?.close())

interface Reference {
  where?: string
  having?: string
  order: string
  offset?: number
  limit?: number
  window?: { startTimeUnixMs: number; endTimeUnixMs: number }
  params?: Record<string, unknown>
}

// r_ aliases: an alias equal to a column name would shadow that column in WHERE.
const AGGREGATES = `
  session_id,
  argMaxIf(session_name, request_created_at, session_name != '') AS r_session_name,
  toUnixTimestamp64Milli(min(request_created_at)) AS r_created_at,
  toUnixTimestamp64Milli(max(request_created_at)) AS r_latest_request_created_at,
  sum(cost) AS r_total_cost,
  count() AS r_total_requests,
  sum(prompt_tokens) AS r_prompt_tokens,
  sum(completion_tokens) AS r_completion_tokens,
  sum(prompt_tokens) + sum(completion_tokens) AS r_total_tokens,
  avg(latency) AS r_avg_latency,
  arraySort(groupUniqArrayIf(user_id, user_id != '')) AS r_user_ids`

function referenceSql(r: Reference, select: string): string {
  return `
SELECT ${select}
FROM (SELECT * FROM request_response_rmt WHERE organization_id = {org:UUID}
      ORDER BY ingested_at DESC LIMIT 1 BY request_id)
WHERE request_created_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
  AND request_created_at < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
  AND session_id != '' AND (${r.where ?? 'true'})
GROUP BY session_id
HAVING ${r.having ?? 'true'}`
}

async function reference(r: Reference, of: TestOrg = org) {
  const window = r.window ?? WINDOW
  const rs = await tally.clickhouse.query({
    query: `${referenceSql(r, AGGREGATES)} ORDER BY ${r.order}, session_id LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
    query_params: {
      org: of.organizationId,
      start: window.startTimeUnixMs,
      end: window.endTimeUnixMs,
      offset: r.offset ?? 0,
      limit: r.limit ?? 50,
      ...r.params,
    },
    format: 'JSONEachRow',
  })
  const iso = (ms: unknown) => new Date(ms as number).toISOString().replace('Z', '+00:00')
  return (await rs.json<Record<string, unknown>>()).map((row) => ({
    session_id: row.session_id,
    session_name: row.r_session_name,
    created_at: iso(row.r_created_at),
    latest_request_created_at: iso(row.r_latest_request_created_at),
    total_cost: row.r_total_cost,
    total_requests: row.r_total_requests,
    prompt_tokens: row.r_prompt_tokens,
    completion_tokens: row.r_completion_tokens,
    total_tokens: row.r_total_tokens,
    avg_latency: row.r_avg_latency,
    user_ids: row.r_user_ids,
  }))
}

async function referenceCount(r: Reference, of: TestOrg = org): Promise<number> {
  const window = r.window ?? WINDOW
  const rs = await tally.clickhouse.query({
    query: `SELECT count() AS n FROM (${referenceSql(r, AGGREGATES)})`,
    query_params: {
      org: of.organizationId,
      start: window.startTimeUnixMs,
      end: window.endTimeUnixMs,
      ...r.params,
    },
    format: 'JSONEachRow',
  })
  return Number((await rs.json<{ n: number }>())[0]?.n)
}

const claudeRequests = { request_response_rmt: { model: { like: 'claude%' } } }
const cases: [string, Record<string, unknown>, Reference][] = [
  ['default page', {}, { order: 'r_created_at DESC' }],
  ['newest five', { limit: 5 }, { order: 'r_created_at DESC', limit: 5 }],
  [
    'window not on whole hours (rollup plus requests at the edges)',
    {
      timeFilter: { startTimeUnixMs: START + 1_800_123, endTimeUnixMs: START + 10 * DAY + 900_000 },
      offset: 1000,
    },
    {
      order: 'r_created_at DESC',
      offset: 1000,
      window: { startTimeUnixMs: START + 1_800_123, endTimeUnixMs: START + 10 * DAY + 900_000 },
    },
  ],
  [
    'window not on whole hours, oldest first',
    {
      timeFilter: { startTimeUnixMs: START + 1_800_123, endTimeUnixMs: START + 10 * DAY + 900_000 },
      sort: { created_at: 'asc' },
    },
    {
      order: 'r_created_at ASC',
      window: { startTimeUnixMs: START + 1_800_123, endTimeUnixMs: START + 10 * DAY + 900_000 },
    },
  ],
  [
    'total_cost asc, second page of 100',
    { sort: { total_cost: 'asc' }, offset: 100, limit: 100 },
    { order: 'r_total_cost ASC', offset: 100, limit: 100 },
  ],
  [
    'total_requests desc, 1000 rows of ties',
    { sort: { total_requests: 'desc' }, limit: 1000 },
    { order: 'r_total_requests DESC', limit: 1000 },
  ],
  [
    'avg_latency desc, deep offset',
    { sort: { avg_latency: 'desc' }, offset: 3000 },
    { order: 'r_avg_latency DESC', offset: 3000 },
  ],
  [
    'latest_request_created_at asc',
    { sort: { latest_request_created_at: 'asc' } },
    { order: 'r_latest_request_created_at ASC' },
  ],
  [
    'search on id',
    { search: 'SESS-12' },
    { order: 'r_created_at DESC', where: "positionCaseInsensitive(session_id, 'sess-12') > 0" },
  ],
  [
    'search on name',
    { search: 'ding #4' },
    { order: 'r_created_at DESC', where: "positionCaseInsensitive(session_name, 'ding #4') > 0" },
  ],
  [
    'nameEquals',
    { nameEquals: 'Onboarding #2' },
    { order: 'r_created_at DESC', where: "session_name = 'Onboarding #2'" },
  ],
  [
    'property and model filter',
    {
      filter: {
        left: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
        operator: 'and',
        right: { properties: { env: { equals: 'prod' } } },
      },
    },
    { order: 'r_created_at DESC', where: "model = 'gpt-4o' AND properties['env'] = 'prod'" },
  ],
  [
    'or of request filters',
    {
      filter: {
        left: claudeRequests,
        operator: 'or',
        right: { request_response_rmt: { status: { equals: 500 } } },
      },
      sort: { total_cost: 'desc' },
    },
    { order: 'r_total_cost DESC', where: "model LIKE 'claude%' OR status = 500" },
  ],
  [
    'session-level filter under and',
    {
      filter: {
        left: claudeRequests,
        operator: 'and',
        right: { sessions_request_response_rmt: { session_total_requests: { gte: 5 } } },
      },
    },
    { order: 'r_created_at DESC', where: "model LIKE 'claude%'", having: 'r_total_requests >= 5' },
  ],
  [
    'one-day window',
    {
      timeFilter: { startTimeUnixMs: START + 10 * DAY, endTimeUnixMs: START + 11 * DAY },
      sort: { total_cost: 'desc' },
    },
    {
      order: 'r_total_cost DESC',
      window: { startTimeUnixMs: START + 10 * DAY, endTimeUnixMs: START + 11 * DAY },
    },
  ],
]

describe('fast path equals the naive reference on generated data', () => {
  it.each(cases)('%s', async (_name, overrides, ref) => {
    const payload = { timeFilter: WINDOW, timezoneDifference: 0, filter: 'all', ...overrides }
    const [fast, expected, total, expectedTotal] = await Promise.all([
      sessions(tally, org, payload),
      reference(ref),
      count(tally, org, payload),
      referenceCount(ref),
    ])
    expect(expected.length).toBeGreaterThan(0)
    expect(fast).toEqual(expected)
    expect(total).toBe(expectedTotal)
  })

  it('a window edge inside an hour: the rollup takes whole hours only, the edges come from requests', async () => {
    // About 35 of this organization's requests fall in the half hour before the edge, in the
    // same hour as requests inside the window. A window with one edge on a whole hour reads
    // requests at the other edge only.
    const edge = START + 5 * DAY + 1_800_001
    const windows = [
      { startTimeUnixMs: edge, endTimeUnixMs: edge + 2 * DAY },
      { startTimeUnixMs: edge, endTimeUnixMs: START + 7 * DAY },
      { startTimeUnixMs: START + 3 * DAY, endTimeUnixMs: edge },
    ]
    for (const window of windows)
      for (const direction of ['asc', 'desc']) {
        const payload = {
          timeFilter: window,
          timezoneDifference: 0,
          filter: 'all',
          sort: { created_at: direction },
        }
        const ref = { order: `r_created_at ${direction.toUpperCase()}`, window }
        const [fast, expected] = await Promise.all([sessions(tally, org, payload), reference(ref)])
        expect(expected.length).toBeGreaterThan(0)
        expect(fast).toEqual(expected)
        expect(await count(tally, org, payload)).toBe(await referenceCount(ref))
      }
  })

  it("a small organization's page is the newest-first shortcut's alone when it took the whole window", async () => {
    const small = await tally.newOrg()
    const HOUR = 3_600_000
    const day = START + 2 * DAY
    const at = (minutes: number) => new Date(day + minutes * 60_000)
    // Nine sessions over eight hours, one of them spread over three; "early" in the half hour
    // before 01:00, which a window starting at 00:30 reads from the requests, and again last: the
    // newest session by its last request, the oldest by its first.
    const events = [
      ...Array.from({ length: 8 }, (_, i) => ({ id: `small-${i}`, minutes: 60 + i * 60 + i })),
      { id: 'small-spread', minutes: 65 },
      { id: 'small-spread', minutes: 185 },
      { id: 'small-spread', minutes: 425 },
      { id: 'early', minutes: 40 },
      { id: 'early', minutes: 500 },
    ].map(({ id, minutes }, i) =>
      sampleEvent({
        organization_id: small.organizationId,
        session_id: id,
        created_at: at(minutes),
        completed_at: at(minutes),
        cost_usd: (i + 1) / 8,
        user_id: `u${i % 2}`,
      }),
    )
    await insert(tally, events)
    // The repository over the same client, counting the statements a page takes.
    let n = 0
    const counting = {
      query: (params: Parameters<ClickHouseClient['query']>[0]) => {
        n += 1
        return tally.clickhouse.query(params)
      },
      command: (params: Parameters<ClickHouseClient['command']>[0]) => tally.clickhouse.command(params),
    } as unknown as ClickHouseClient
    const repo = createSessionRepo(counting, queryLimits(tally.config))
    const whole = { startTimeUnixMs: day, endTimeUnixMs: day + 9 * HOUR + 1_234 }
    const cut = { startTimeUnixMs: day + 30 * 60_000, endTimeUnixMs: day + 9 * HOUR }
    for (const [window, offset, limit, expectedStatements] of [
      [whole, 0, 50, 2],
      [whole, 4, 50, 2],
      // The partial first hour's sessions are not in the rollup: the first pass runs too.
      [cut, 0, 50, 3],
      // Unless the shortcut fills the page, "early" ranked by its first request, in that hour.
      [cut, 0, 2, 2],
    ] as const) {
      const payload = { timeFilter: window, timezoneDifference: 0, filter: 'all', offset, limit }
      const expected = await reference({ order: 'r_created_at DESC', window, offset, limit }, small)
      expect(expected.length).toBeGreaterThan(0)
      n = 0
      const rows = await repo.page(toQuery(small.organizationId, sessionQueryBody.parse(payload)))
      expect(rows.map((r) => r.session_id)).toEqual(expected.map((r) => r.session_id))
      expect(n).toBe(expectedStatements)
      expect(await sessions(tally, small, payload)).toEqual(expected)
    }
  })

  it('the re-ingested requests replaced their first versions rather than adding to them', async () => {
    const [top] = await sessions(tally, org, {
      timeFilter: WINDOW,
      timezoneDifference: 0,
      filter: 'all',
      search: 'sess-',
      sort: { total_requests: 'desc' },
    })
    expect(top?.total_requests).toBe(10)
  })
})

// The sessions rollup (session_hour_totals) built for the window's first five days: lists sorted
// by cost, request count or latency read those hours from it and the rest from the requests, and
// must still equal the reference, as must any hour written to after its build.
describe('sorted by cost, count or latency, with the sessions rollup built', () => {
  const HOUR = 3_600_000
  const BUILT_HOURS = 5 * 24
  const limits = { statementTimeoutMs: 60_000, memoryBytes: 2 ** 30, confirmAfterMs: 0 }
  const freshHours = async (overrides: Record<string, unknown>, counting = false) => {
    const q = toQuery(
      org.organizationId,
      sessionQueryBody.parse({ timeFilter: WINDOW, timezoneDifference: 0, filter: 'all', ...overrides }),
    )
    const statement = totalsHoursStatement(q, counting)
    if (!statement) return undefined
    const rs = await tally.clickhouse.query({ ...statement, format: 'JSONEachRow' })
    return ((await rs.json<{ hours: number[] }>())[0]?.hours ?? []).length
  }

  beforeAll(async () => {
    for (let h = 0; h < BUILT_HOURS; h += 1)
      await buildHour(tally.clickhouse, org.organizationId, START + h * HOUR, limits)
    // The other organization's first day too: a read that leaked across organizations would
    // add its sessions to the pages below.
    for (let h = 0; h < 24; h += 1)
      await buildHour(tally.clickhouse, neighbour.organizationId, START + h * HOUR, limits)
  }, 120_000)

  const AT_LEAST_TEN = { sessions_request_response_rmt: { session_total_requests: { gte: 10 } } }
  const sorted: [string, Record<string, unknown>, Reference][] = cases.filter(
    ([, overrides]) =>
      !('search' in overrides) &&
      !('nameEquals' in overrides) &&
      !('filter' in overrides) &&
      typeof overrides.sort === 'object' &&
      !('created_at' in (overrides.sort as object)) &&
      !('latest_request_created_at' in (overrides.sort as object)),
  )
  sorted.push(
    [
      'a session-level filter, newest first',
      { filter: AT_LEAST_TEN },
      { order: 'r_created_at DESC', having: 'r_total_requests >= 10' },
    ],
    [
      'session-level filters under or, by latest request, oldest first, second page',
      {
        filter: {
          left: { sessions_request_response_rmt: { session_total_cost: { gt: 6 } } },
          operator: 'or',
          right: { sessions_request_response_rmt: { session_total_tokens: { lt: 9000 } } },
        },
        sort: { latest_request_created_at: 'asc' },
        offset: 50,
      },
      {
        order: 'r_latest_request_created_at ASC',
        having: 'r_total_cost > 6 OR r_total_tokens < 9000',
        offset: 50,
      },
    ],
    [
      'a filter on the session times, by cost',
      {
        filter: {
          sessions_request_response_rmt: {
            session_created_at: { gte: new Date(START + 3 * DAY).toISOString() },
          },
        },
        sort: { total_cost: 'desc' },
      },
      {
        order: 'r_total_cost DESC',
        having: `r_created_at >= ${START + 3 * DAY}`,
      },
    ],
    [
      'total_cost desc, window cut mid-hour on both ends',
      {
        timeFilter: { startTimeUnixMs: START + 1_800_123, endTimeUnixMs: START + 12 * DAY + 900_000 },
        sort: { total_cost: 'desc' },
      },
      {
        order: 'r_total_cost DESC',
        window: { startTimeUnixMs: START + 1_800_123, endTimeUnixMs: START + 12 * DAY + 900_000 },
      },
    ],
    [
      'total_cost desc, a day of built hours',
      {
        timeFilter: { startTimeUnixMs: START + 2 * DAY, endTimeUnixMs: START + 3 * DAY },
        sort: { total_cost: 'desc' },
      },
      {
        order: 'r_total_cost DESC',
        window: { startTimeUnixMs: START + 2 * DAY, endTimeUnixMs: START + 3 * DAY },
      },
    ],
    [
      'total_requests asc, the multi-hour sessions among them',
      { sort: { total_requests: 'asc' }, limit: 200 },
      { order: 'r_total_requests ASC', limit: 200 },
    ],
  )

  it('is read for those sorts and session-level filters only, and for the built hours', async () => {
    expect(await freshHours({ sort: { total_cost: 'desc' } })).toBe(BUILT_HOURS)
    // A count reads it for session-level conditions only, whatever the sort.
    expect(await freshHours({ sort: { total_cost: 'desc' } }, true)).toBeUndefined()
    expect(await freshHours({ filter: AT_LEAST_TEN }, true)).toBe(BUILT_HOURS)
    expect(
      await freshHours({ filter: { left: AT_LEAST_TEN, operator: 'and', right: claudeRequests } }, true),
    ).toBeUndefined()
    expect(await freshHours({ sort: { avg_latency: 'asc' } })).toBe(BUILT_HOURS)
    expect(await freshHours({ sort: { created_at: 'desc' } })).toBeUndefined()
    expect(await freshHours({ sort: { created_at: 'desc' }, filter: AT_LEAST_TEN })).toBe(BUILT_HOURS)
    expect(
      await freshHours({
        sort: { total_cost: 'desc' },
        filter: { left: AT_LEAST_TEN, operator: 'and', right: claudeRequests },
      }),
    ).toBeUndefined()
    expect(await freshHours({ sort: { total_cost: 'desc' }, search: 'sess' })).toBeUndefined()
    expect(await freshHours({ sort: { total_cost: 'desc' }, nameEquals: 'Ops #1' })).toBeUndefined()
    expect(
      await freshHours({
        sort: { total_cost: 'desc' },
        filter: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
      }),
    ).toBeUndefined()
  })

  it.each(sorted)('%s', async (_name, overrides, ref) => {
    const payload = { timeFilter: WINDOW, timezoneDifference: 0, filter: 'all', ...overrides }
    const [fast, expected, total, expectedTotal] = await Promise.all([
      sessions(tally, org, payload),
      reference(ref),
      count(tally, org, payload),
      referenceCount(ref),
    ])
    expect(expected.length).toBeGreaterThan(0)
    expect(fast).toEqual(expected)
    expect(total).toBe(expectedTotal)
  })

  it('an hour written to after its build is read from the requests until built again', async () => {
    // Every request of the session the rollup ranks first re-sent with no cost: it must fall to
    // the end at once, its hours read from the requests.
    const built = { startTimeUnixMs: START, endTimeUnixMs: START + BUILT_HOURS * HOUR }
    const payload = { timeFilter: built, timezoneDifference: 0, filter: 'all', sort: { total_cost: 'desc' } }
    const ref = { order: 'r_total_cost DESC', window: built }
    const [top] = await sessions(tally, org, payload)
    const hoursOf = async () => {
      const rs = await tally.clickhouse.query({
        query: `SELECT DISTINCT toUnixTimestamp(toStartOfHour(request_created_at)) * 1000 AS hour
                FROM request_response_rmt WHERE organization_id = {org:UUID} AND session_id = {id:String}`,
        query_params: { org: org.organizationId, id: top?.session_id },
        format: 'JSONEachRow',
      })
      return (await rs.json<{ hour: number }>()).map((r) => Number(r.hour))
    }
    const hours = await hoursOf()
    expect(hours.length).toBeGreaterThan(0)
    // The sessions costing at least as much as the top one: it among them until its re-send.
    const costly = {
      timeFilter: built,
      timezoneDifference: 0,
      filter: { sessions_request_response_rmt: { session_total_cost: { gte: top?.total_cost } } },
    }
    const costlyRef = {
      order: 'r_total_cost DESC',
      window: built,
      having: `r_total_cost >= ${top?.total_cost}`,
    }
    const before = await count(tally, org, costly)
    expect(before).toBeGreaterThan(0)
    expect(before).toBe(await referenceCount(costlyRef))
    await tally.clickhouse.command({
      query: `INSERT INTO request_response_rmt
              SELECT * REPLACE (0 AS cost, now64(3) + 2 AS ingested_at)
              FROM request_response_rmt FINAL WHERE organization_id = {org:UUID} AND session_id = {id:String}`,
      query_params: { org: org.organizationId, id: top?.session_id },
    })
    expect(await freshHours({ timeFilter: built, sort: { total_cost: 'desc' } })).toBe(
      BUILT_HOURS - hours.length,
    )
    const [fast, expected] = await Promise.all([sessions(tally, org, payload), reference(ref)])
    expect(fast).toEqual(expected)
    expect(fast[0]?.session_id).not.toBe(top?.session_id)
    expect(await count(tally, org, costly)).toBe(before - 1)
    expect(await referenceCount(costlyRef)).toBe(before - 1)
    // Built again, those hours are read from the rollup, with the same answer.
    for (const hour of hours) await buildHour(tally.clickhouse, org.organizationId, hour, limits)
    expect(await freshHours({ timeFilter: built, sort: { total_cost: 'desc' } })).toBe(BUILT_HOURS)
    expect(await sessions(tally, org, payload)).toEqual(expected)
  })

  it('walks by cursor through the same sessions as the reference', async () => {
    const payload = {
      // Built hours and, past the fifth day, hours read from the requests.
      timeFilter: { startTimeUnixMs: START + 1_800_000, endTimeUnixMs: START + 11 * DAY + 1_800_000 },
      timezoneDifference: 0,
      filter: 'all',
      sort: { avg_latency: 'asc' },
      limit: 500,
    }
    const seen: unknown[] = []
    let cursor: string | undefined
    for (let n = 0; n < 100; n += 1) {
      const res = await tally.app.inject({
        method: 'POST',
        url: '/v1/session/query',
        headers: org.headers,
        payload: { ...payload, ...(cursor ? { cursor } : {}) },
      })
      const page = JSON.parse(res.body)
      expect(res.statusCode, page.error).toBe(200)
      seen.push(...page.data)
      cursor = page.next_cursor ?? undefined
      if (!cursor) break
    }
    const expected = await reference({
      order: 'r_avg_latency ASC',
      window: payload.timeFilter,
      limit: 100_000,
    })
    expect(expected.length).toBeGreaterThan(1000)
    expect(seen).toEqual(expected)
  })
})
