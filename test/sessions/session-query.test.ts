import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { callApi } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { body, count, insert, sessions } from './client.ts'

let tally: TestTally
let org: TestOrg
let other: TestOrg

const at = (iso: string) => new Date(iso)

/** Hand-checked fixture; the expected aggregates are written out in the tests below. */
function fixture(organization_id: string): RequestEvent[] {
  const e = (o: Partial<RequestEvent>) =>
    sampleEvent({ organization_id, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, ...o })
  return [
    // s-alpha: three requests, the first exactly at the window's start (included).
    e({
      session_id: 's-alpha',
      session_name: 'Alpha Chat',
      created_at: at('2026-11-01T00:00:00.000Z'),
      cost_usd: 0.1,
      latency_ms: 100,
      prompt_tokens: 10,
      completion_tokens: 20,
      total_tokens: 30,
      user_id: 'u1',
      model: 'gpt-4o',
      properties: { env: 'prod' },
    }),
    e({
      session_id: 's-alpha',
      session_name: 'Alpha Chat',
      created_at: at('2026-11-01T05:00:00.000Z'),
      cost_usd: 0.2,
      latency_ms: 300,
      prompt_tokens: 5,
      completion_tokens: 5,
      total_tokens: 10,
      user_id: 'u2',
      model: 'claude',
      properties: { env: 'dev' },
    }),
    e({
      session_id: 's-alpha',
      session_name: 'Alpha Chat',
      created_at: at('2026-11-01T06:00:00.000Z'),
      cost_usd: 0.3,
      latency_ms: 200,
      prompt_tokens: 1,
      completion_tokens: 1,
      total_tokens: 2,
      user_id: 'u1',
      model: 'gpt-4o',
      properties: {},
    }),
    // s-beta: one request inside; one exactly at the end and one just before the start (both out).
    e({
      session_id: 's-beta',
      session_name: 'Beta Flow',
      created_at: at('2026-11-02T12:00:00.000Z'),
      cost_usd: 1,
      latency_ms: 1000,
      prompt_tokens: 100,
      completion_tokens: 100,
      total_tokens: 200,
      user_id: '',
      model: 'gpt-4o',
      status: 500,
    }),
    e({
      session_id: 's-beta',
      session_name: 'Beta Flow',
      created_at: at('2026-11-03T00:00:00.000Z'),
      cost_usd: 5,
      model: 'gpt-4o',
    }),
    e({
      session_id: 's-beta',
      session_name: 'Beta Flow',
      created_at: at('2026-10-31T23:59:59.999Z'),
      cost_usd: 7,
      model: 'gpt-4o',
    }),
    // s-gamma: its name, not its id, contains "alpha".
    e({
      session_id: 's-gamma',
      session_name: 'gamma ALPHA',
      created_at: at('2026-11-02T18:00:00.000Z'),
      cost_usd: 0.5,
      latency_ms: 500,
      prompt_tokens: 2,
      completion_tokens: 3,
      total_tokens: 5,
      user_id: 'u3',
      model: 'claude',
      cached: true,
    }),
    // s-delta starts at the same instant as s-beta: the tie is broken by session id.
    e({
      session_id: 's-delta',
      session_name: 'Delta',
      created_at: at('2026-11-02T12:00:00.000Z'),
      cost_usd: 2,
      latency_ms: 50,
      user_id: 'u4',
      model: 'mistral',
    }),
    // No session: never a row.
    e({ session_id: '', session_name: '', created_at: at('2026-11-01T12:00:00.000Z'), cost_usd: 9 }),
  ]
}

const ALPHA = {
  session_id: 's-alpha',
  session_name: 'Alpha Chat',
  created_at: '2026-11-01T00:00:00.000+00:00',
  latest_request_created_at: '2026-11-01T06:00:00.000+00:00',
  total_requests: 3,
  prompt_tokens: 16,
  completion_tokens: 26,
  total_tokens: 42,
  avg_latency: 200,
  user_ids: ['u1', 'u2'],
}
const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.session_id)

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  other = await tally.newOrg()
  const rows = fixture(org.organizationId)
  // A redelivered request (same id and time, written again) must not count twice.
  await insert(tally, rows)
  // A separate insert makes a separate part: the duplicate stays until a merge.
  await insert(tally, [rows[0] as RequestEvent])
  // Another organization with the same session ids and far larger numbers.
  await insert(
    tally,
    fixture(other.organizationId).map((r) => ({ ...r, cost_usd: 100, session_name: 'Other' })),
  )
})
afterAll(() => tally?.close())

describe('POST /v1/session/query', () => {
  it('aggregates the requests of the window per session, numbers as JSON numbers', async () => {
    const rows = await sessions(tally, org, body())
    expect(ids(rows)).toEqual(['s-gamma', 's-beta', 's-delta', 's-alpha'])
    const alpha = rows[3] as Record<string, unknown>
    expect(alpha).toMatchObject(ALPHA)
    expect(alpha.total_cost).toBeCloseTo(0.6, 12)
    expect(rows[1]).toEqual({
      session_id: 's-beta',
      session_name: 'Beta Flow',
      created_at: '2026-11-02T12:00:00.000+00:00',
      latest_request_created_at: '2026-11-02T12:00:00.000+00:00',
      total_cost: 1,
      total_requests: 1,
      prompt_tokens: 100,
      completion_tokens: 100,
      total_tokens: 200,
      avg_latency: 1000,
      user_ids: [],
    })
  })

  it('renders times at the caller offset (getTimezoneOffset convention)', async () => {
    const alpha = async (timezoneDifference: number) =>
      (await sessions(tally, org, body({ timezoneDifference, search: 'alpha chat' })))[0]
    expect(await alpha(-120)).toMatchObject({
      created_at: '2026-11-01T02:00:00.000+02:00',
      latest_request_created_at: '2026-11-01T08:00:00.000+02:00',
    })
    expect(await alpha(330)).toMatchObject({ created_at: '2026-10-31T18:30:00.000-05:30' })
    // The farthest offsets that exist, UTC+14:00 and UTC−12:00, render as valid ISO 8601.
    expect(await alpha(-840)).toMatchObject({ created_at: '2026-11-01T14:00:00.000+14:00' })
    expect(await alpha(720)).toMatchObject({ created_at: '2026-10-31T12:00:00.000-12:00' })
  })

  it('honours the window boundaries: start included, end excluded', async () => {
    const one = async (startTimeUnixMs: number, endTimeUnixMs: number) =>
      ids(await sessions(tally, org, body({ timeFilter: { startTimeUnixMs, endTimeUnixMs } })))
    expect(await one(Date.parse('2026-11-02T12:00:00.000Z'), Date.parse('2026-11-02T12:00:00.001Z'))).toEqual(
      ['s-beta', 's-delta'],
    )
    expect(await one(Date.parse('2026-11-02T12:00:00.001Z'), Date.parse('2026-11-02T18:00:00.000Z'))).toEqual(
      [],
    )
    const beta = await sessions(
      tally,
      org,
      body({
        nameEquals: 'Beta Flow',
        timeFilter: {
          startTimeUnixMs: Date.parse('2026-10-31T23:59:59.999Z'),
          endTimeUnixMs: Date.parse('2026-11-03T00:00:00.001Z'),
        },
      }),
    )
    expect(beta[0]).toMatchObject({ total_requests: 3, total_cost: 13 })
  })

  it('takes the widest window allowed (1900 to 2299)', async () => {
    const timeFilter = { startTimeUnixMs: Date.UTC(1900, 0, 1), endTimeUnixMs: Date.UTC(2299, 11, 31) }
    const rows = await sessions(tally, org, body({ timeFilter, sort: { total_cost: 'desc' } }))
    expect(rows.map((r) => [r.session_id, r.total_requests])).toEqual([
      ['s-beta', 3],
      ['s-delta', 1],
      ['s-alpha', 3],
      ['s-gamma', 1],
    ])
    // s-beta now starts at its 2026-10-31 request, the oldest of all.
    expect(ids(await sessions(tally, org, body({ timeFilter })))).toEqual([
      's-gamma',
      's-delta',
      's-alpha',
      's-beta',
    ])
    expect(await count(tally, org, body({ timeFilter }))).toBe(4)
  })

  it('search matches id or name, case-insensitively; nameEquals is exact', async () => {
    expect(ids(await sessions(tally, org, body({ search: 'ALPHA' })))).toEqual(['s-gamma', 's-alpha'])
    expect(ids(await sessions(tally, org, body({ search: 'a c' })))).toEqual(['s-alpha'])
    expect(ids(await sessions(tally, org, body({ search: 'S-DEL' })))).toEqual(['s-delta'])
    expect(ids(await sessions(tally, org, body({ search: '%' })))).toEqual([])
    expect(ids(await sessions(tally, org, body({ nameEquals: 'Beta Flow' })))).toEqual(['s-beta'])
    expect(ids(await sessions(tally, org, body({ nameEquals: 'beta flow' })))).toEqual([])
  })

  it('a request-level filter chooses the requests that are aggregated', async () => {
    const rows = await sessions(
      tally,
      org,
      body({ filter: { request_response_rmt: { model: { equals: 'claude' } } } }),
    )
    expect(ids(rows)).toEqual(['s-gamma', 's-alpha'])
    expect(rows[1]).toMatchObject({ total_requests: 1, total_cost: 0.2, user_ids: ['u2'], avg_latency: 300 })
    const prod = await sessions(
      tally,
      org,
      body({ filter: { request_response_rmt: { properties: { env: { equals: 'prod' } } } } }),
    )
    expect(prod).toMatchObject([{ session_id: 's-alpha', total_requests: 1 }])
  })

  it.each([
    [{ model: { 'not-equals': 'gpt-4o' } }, ['s-gamma', 's-delta', 's-alpha']],
    [{ model: { like: 'gpt%' } }, ['s-beta', 's-alpha']],
    [{ model: { ilike: 'CLAU%' } }, ['s-gamma', 's-alpha']],
    [{ model: { contains: 'STRA' } }, ['s-delta']],
    [{ model: { 'not-contains': 'g' } }, ['s-gamma', 's-delta', 's-alpha']],
    [{ cost: { gt: 0.5 } }, ['s-beta', 's-delta']],
    [{ cost: { gte: 0.5 } }, ['s-gamma', 's-beta', 's-delta']],
    [{ cost: { lt: 0.2 } }, ['s-alpha']],
    [{ cost: { lte: 0.2 } }, ['s-alpha']],
    [{ cost: { equals: 2 } }, ['s-delta']],
    [{ status: { 'not-equals': 200 } }, ['s-beta']],
    [{ created_at: { gte: '2026-11-02T12:00:00Z' } }, ['s-gamma', 's-beta', 's-delta']],
    [{ created_at: { lt: Date.parse('2026-11-01T05:00:00Z') } }, ['s-alpha']],
    [{ created_at: { equals: '2026-11-02T18:00:00+00:00' } }, ['s-gamma']],
    [{ created_at: { gt: '2026-11-02T12:00:00Z' } }, ['s-gamma']],
    [{ created_at: { lte: '2026-11-01T00:00:00Z' } }, ['s-alpha']],
    [{ cached: { equals: true } }, ['s-gamma']],
    [{ user_id: { equals: 'u4' } }, ['s-delta']],
  ])('filter %j through sessions', async (condition, expected) => {
    expect(ids(await sessions(tally, org, body({ filter: { request_response_rmt: condition } })))).toEqual(
      expected,
    )
  })

  it.each([
    [{ session_total_requests: { gte: 2 } }, ['s-alpha']],
    [{ session_total_cost: { gt: 0.55 } }, ['s-beta', 's-delta', 's-alpha']],
    [{ session_total_tokens: { equals: 42 } }, ['s-alpha']],
    [{ session_avg_latency: { lt: 300 } }, ['s-delta', 's-alpha']],
    [{ session_created_at: { gte: '2026-11-02T00:00:00Z' } }, ['s-gamma', 's-beta', 's-delta']],
    [{ session_latest_request_created_at: { lt: '2026-11-02T00:00:00Z' } }, ['s-alpha']],
  ])('session-level filter %j applies after aggregation', async (condition, expected) => {
    const filter = { sessions_request_response_rmt: condition }
    expect(ids(await sessions(tally, org, body({ filter })))).toEqual(expected)
    expect(await count(tally, org, body({ filter }))).toBe(expected.length)
  })

  it('request- and session-level conditions under "and" split: filter requests, then sessions', async () => {
    // gpt-4o requests only: alpha 0.1 + 0.3 = 0.4, beta 1; delta has none.
    const filter = {
      left: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
      operator: 'and',
      right: { sessions_request_response_rmt: { session_total_cost: { gt: 0.35 } } },
    }
    const rows = await sessions(tally, org, body({ filter }))
    expect(ids(rows)).toEqual(['s-beta', 's-alpha'])
    expect(rows[1]).toMatchObject({ total_requests: 2, user_ids: ['u1'] })
    expect(await count(tally, org, body({ filter }))).toBe(2)
  })

  it.each([
    [{ total_cost: 'desc' }, ['s-delta', 's-beta', 's-alpha', 's-gamma']],
    [{ total_cost: 'asc' }, ['s-gamma', 's-alpha', 's-beta', 's-delta']],
    [{ total_requests: 'desc' }, ['s-alpha', 's-beta', 's-delta', 's-gamma']],
    [{ total_requests: 'asc' }, ['s-beta', 's-delta', 's-gamma', 's-alpha']],
    [{ avg_latency: 'asc' }, ['s-delta', 's-alpha', 's-gamma', 's-beta']],
    [{ latest_request_created_at: 'desc' }, ['s-gamma', 's-beta', 's-delta', 's-alpha']],
    [{ created_at: 'asc' }, ['s-alpha', 's-beta', 's-delta', 's-gamma']],
  ])('sorts by %j, ties by session id', async (sort, expected) => {
    expect(ids(await sessions(tally, org, body({ sort })))).toEqual(expected)
  })

  it('pages never overlap or skip, and count matches', async () => {
    const page = async (offset: number) => ids(await sessions(tally, org, body({ offset, limit: 2 })))
    expect([await page(0), await page(2), await page(4)]).toEqual([
      ['s-gamma', 's-beta'],
      ['s-delta', 's-alpha'],
      [],
    ])
    expect(await count(tally, org, body({ offset: 3, limit: 1 }))).toBe(4)
    expect(await count(tally, org, body({ search: 'alpha' }))).toBe(2)
    expect(
      await count(tally, org, body({ filter: { request_response_rmt: { model: { equals: 'claude' } } } })),
    ).toBe(2)
  })

  it('isolates organizations: the same session ids elsewhere never leak in', async () => {
    const mine = await sessions(tally, org, body({ sort: { total_cost: 'desc' } }))
    expect(mine[0]).toMatchObject({ session_id: 's-delta', total_cost: 2 })
    const theirs = await sessions(tally, other, body())
    expect(theirs.every((r) => r.session_name === 'Other')).toBe(true)
    const fresh = await tally.newOrg()
    expect(await sessions(tally, fresh, body())).toEqual([])
    expect(await count(tally, fresh, body())).toBe(0)
  })

  it('sees requests that came through the real ingest path', async () => {
    const fresh = await tally.newOrg()
    const event = (at: string, cost_usd: number) =>
      sampleEvent({
        organization_id: fresh.organizationId,
        session_id: 'piped',
        created_at: new Date(at),
        cost_usd,
      })
    await tally.publisher.publish([event('2026-11-01T01:00:00Z', 0.25), event('2026-11-01T02:00:00Z', 0.5)])
    const rows = await waitFor(
      async () => {
        const page = await sessions(tally, fresh, body())
        return page.length > 0 && page
      },
      { what: 'the session of the piped requests', timeoutMs: 10_000 },
    )
    expect(rows).toMatchObject([{ session_id: 'piped', total_requests: 2, total_cost: 0.75 }])
    expect(await count(tally, fresh, body())).toBe(1)
  })

  it('needs an API key', async () => {
    const res = await callApi(tally.app, 'POST', '/v1/session/query', { body: body() })
    expect(res.status).toBe(401)
  })
})

describe('bad input is a 400 naming the field and the rule', () => {
  const { timeFilter: _t, ...noWindow } = body()
  const { timezoneDifference: _z, ...noZone } = body()
  const { filter: _f, ...noFilter } = body()
  it.each([
    [noWindow, 'body.timeFilter: is required'],
    [noZone, 'body.timezoneDifference: must be a number of minutes'],
    [noFilter, 'body.filter: is required'],
    [
      body({ timezoneDifference: 841 }),
      'body.timezoneDifference: must be between -840 and 840 (UTC+14:00 to UTC−14:00)',
    ],
    [
      body({ timezoneDifference: -1440 }),
      'body.timezoneDifference: must be between -840 and 840 (UTC+14:00 to UTC−14:00)',
    ],
    [body({ timezoneDifference: 1.5 }), 'body.timezoneDifference: must be a whole number of minutes'],
    [body({ limit: 1001 }), 'body.limit: must be between 1 and 1000'],
    [body({ limit: 0 }), 'body.limit: must be between 1 and 1000'],
    [body({ offset: -1 }), 'body.offset: must be at least 0'],
    [body({ offset: '10' }), 'body.offset: must be a number'],
    [body({ search: 5 }), 'body.search: must be a string'],
    [body({ nameEquals: null }), 'body.nameEquals: must be a string'],
    [
      body({ timeFilter: { startTimeUnixMs: 10, endTimeUnixMs: 10 } }),
      'body.timeFilter.endTimeUnixMs: must be after startTimeUnixMs',
    ],
    [
      body({ timeFilter: { startTimeUnixMs: 1.5, endTimeUnixMs: 10 } }),
      'body.timeFilter.startTimeUnixMs: must be a whole number of milliseconds',
    ],
    [
      body({ timeFilter: { startTimeUnixMs: 0 } }),
      'body.timeFilter.endTimeUnixMs: must be Unix milliseconds (a number)',
    ],
    [body({ sort: { total_cost: 'desc', created_at: 'asc' } }), 'body.sort: must name exactly one field'],
    [
      body({ sort: { name: 'asc' } }),
      'body.sort: can only sort by created_at, latest_request_created_at, total_cost, total_requests, avg_latency',
    ],
    [body({ sort: { total_cost: 'up' } }), 'body.sort.total_cost: must be "asc" or "desc"'],
    [body({ filter: 'none' }), 'body.filter: must be "all" or a filter node object'],
    [
      body({ filter: { request_response_rmt: { colour: { equals: 'x' } } } }),
      'body.filter.request_response_rmt.colour: unknown field',
    ],
    [
      body({ filter: { sessions_request_response_rmt: { session_total_cost: { gt: 'x' } } } }),
      'body.filter.sessions_request_response_rmt.session_total_cost.gt: must be a number',
    ],
    [
      body({
        filter: {
          left: { request_response_rmt: { model: { equals: 'x' } } },
          operator: 'or',
          right: { sessions_request_response_rmt: { session_total_cost: { gt: 1 } } },
        },
      }),
      'body.filter: "or" cannot combine session-level (sessions_request_response_rmt) and request-level conditions',
    ],
  ])('%#: %s', async (payload, message) => {
    for (const path of ['/v1/session/query', '/v1/session/count']) {
      const res = await callApi(tally.app, 'POST', path, { as: org, body: payload })
      expect(res.status).toBe(400)
      expect(res.data).toBeNull()
      expect(res.error).toContain(message)
    }
  })
})
