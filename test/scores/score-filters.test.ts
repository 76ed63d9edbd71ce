import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// Scores, feedback and after-the-fact properties in the filter language, on real ClickHouse:
// the request query, the session query and count, and webhooks (refused).

let tally: TestTally
let org: TestOrg
let other: TestOrg
let api: ReturnType<typeof apiAs>

const AT = Date.parse('2026-11-20T10:00:00.000Z')
const WINDOW = { startTimeUnixMs: AT - 3_600_000, endTimeUnixMs: AT + 3_600_000 }

async function log(as: ReturnType<typeof apiAs>, fields: Record<string, unknown>): Promise<string> {
  const res = await as.post('/v1/request/log', {
    model: 'gpt-4o-mini',
    created_at: new Date(AT).toISOString(),
    completed_at: new Date(AT + 1000).toISOString(),
    request: { messages: [] },
    response: {},
    ...fields,
  })
  expect(res.status, res.error ?? '').toBe(201)
  return res.data.request_ids[0]
}

async function requestIds(filter: unknown): Promise<string[]> {
  const res = await api.post('/v1/request/query', { filter, limit: 100 })
  expect(res.status, res.error ?? '').toBe(200)
  return res.data.map((r: { request_id: string }) => r.request_id).sort()
}

async function sessionIds(filter: unknown): Promise<string[]> {
  const body = { timeFilter: WINDOW, timezoneDifference: 0, filter, limit: 100 }
  const res = await api.post('/v1/session/query', body)
  expect(res.status, res.error ?? '').toBe(200)
  const count = await api.post('/v1/session/count', body)
  expect(count.data.count).toBe(res.data.length)
  return res.data.map((s: { session_id: string }) => s.session_id).sort()
}

const sorted = (...ids: string[]) => [...ids].sort()
const ids: Record<string, string> = {}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  other = await tally.newOrg()
  api = apiAs(tally.app, org)
  // Session a: two requests, helpfulness 0.9 and 0.5 (avg 0.7); b: one at 0.2 and one unscored.
  ids.a1 = await log(api, { session_id: 'a', properties: { team: 'red' }, status: 200 })
  ids.a2 = await log(api, { session_id: 'a', properties: { team: 'red' }, status: 500 })
  ids.b1 = await log(api, { session_id: 'b', properties: { team: 'blue' } })
  ids.b2 = await log(api, { session_id: 'b' })
  const score = (id: string, scores: Record<string, unknown>) =>
    api.post(`/v1/request/${id}/score`, { scores })
  await score(ids.a1 as string, { helpfulness: 0.9, correct: true })
  await score(ids.a2 as string, { helpfulness: 0.5, correct: false })
  await score(ids.b1 as string, { helpfulness: 0.2 })
  // Another source's score of the same name on a1: a1's helpfulness averages to 0.7 for sessions.
  await api.post('/v1/scores', {
    target: { request_id: ids.a1 },
    name: 'helpfulness',
    value: 0.5,
    source: 'eval',
  })
  await api.post(`/v1/request/${ids.b2}/feedback`, { rating: true })
  await api.post(`/v1/request/${ids.a2}/feedback`, { rating: false })
  await api.post('/v1/scores', { target: { request_id: ids.b1 }, name: 'tone', value: 'polite' })
  await api.post('/v1/scores', { target: { session_id: 'b' }, name: 'resolved', value: true })
  // Another organization: the same names, its own ids.
  const theirs = apiAs(tally.app, other)
  const t = await log(theirs, { session_id: 'a' })
  await theirs.post(`/v1/request/${t}/score`, { scores: { helpfulness: 1 } })
  await theirs.post('/v1/scores', { target: { session_id: 'a' }, name: 'resolved', value: true })
})
afterAll(() => tally?.close())

describe('scores in request filters', () => {
  it('numbers, booleans, categories and feedback', async () => {
    expect(await requestIds({ scores: { helpfulness: { gte: 0.8 } } })).toEqual(sorted(ids.a1 as string))
    expect(await requestIds({ scores: { helpfulness: { lt: 0.6 } } })).toEqual(
      sorted(ids.a1 as string, ids.a2 as string, ids.b1 as string),
    )
    expect(await requestIds({ scores: { correct: { equals: true } } })).toEqual([ids.a1])
    expect(await requestIds({ scores: { correct: { equals: 0 } } })).toEqual([ids.a2])
    expect(await requestIds({ scores: { tone: { equals: 'polite' } } })).toEqual([ids.b1])
    expect(await requestIds({ scores: { tone: { contains: 'POL' } } })).toEqual([ids.b1])
    expect(await requestIds({ feedback: { equals: true } })).toEqual([ids.b2])
    expect(await requestIds({ request_response_rmt: { feedback: { equals: false } } })).toEqual([ids.a2])
    expect(await requestIds({ request_response_rmt: { scores: { nothing: { gt: 0 } } } })).toEqual([])
    expect(
      await requestIds({
        left: { scores: { helpfulness: { gt: 0.1 } } },
        operator: 'and',
        right: { request_response_rmt: { status: { equals: 500 } } },
      }),
    ).toEqual([ids.a2])
  })

  it('a deleted score no longer matches; a changed one matches its new value', async () => {
    const made = await api.post('/v1/scores', { target: { request_id: ids.b2 }, name: 'temp', value: 1 })
    expect(await requestIds({ scores: { temp: { equals: 1 } } })).toEqual([ids.b2])
    await api.post('/v1/scores', { target: { request_id: ids.b2 }, name: 'temp', value: 2 })
    expect(await requestIds({ scores: { temp: { equals: 1 } } })).toEqual([])
    expect(await requestIds({ scores: { temp: { equals: 2 } } })).toEqual([ids.b2])
    expect((await api.delete(`/v1/scores/${made.data.id}`)).status).toBe(200)
    expect(await requestIds({ scores: { temp: { gte: 0 } } })).toEqual([])
  })

  it('refuses what a score condition cannot be, naming the place', async () => {
    const refused = async (filter: unknown) => {
      const res = await api.post('/v1/request/query', { filter })
      expect(res.status).toBe(400)
      return res.error
    }
    expect(await refused({ scores: { helpfulness: { like: 1 } } })).toMatch(
      /body.filter.scores.helpfulness.like/,
    )
    expect(await refused({ scores: { tone: { gt: 'a' } } })).toMatch(/unknown operator for a text/)
    expect(await refused({ scores: { x: { equals: null } } })).toMatch(/body.filter.scores.x.equals/)
    expect(await refused({ scores: {} })).toMatch(/body.filter.scores: must have exactly one score name/)
    expect(await refused({ scores: { ['n'.repeat(201)]: { equals: 1 } } })).toMatch(/1 to 200 characters/)
    expect(await refused({ feedback: { gt: true } })).toMatch(/unknown operator for a boolean/)
    expect(await refused({ sessions_request_response_rmt: { avg_score: { x: { gt: 1 } } } })).toMatch(
      /only available in session queries/,
    )
  })
})

describe('properties set after the fact', () => {
  it('the latest value wins in filters; the request row is not rewritten', async () => {
    expect((await api.put(`/v1/request/${ids.a1}/property`, { key: 'team', value: 'green' })).status).toBe(
      200,
    )
    expect((await api.put(`/v1/request/${ids.b2}/property`, { key: 'reviewed', value: 'yes' })).status).toBe(
      200,
    )
    expect(await requestIds({ properties: { team: { equals: 'green' } } })).toEqual([ids.a1])
    // The stored row still says what it was logged with.
    const result = await tally.clickhouse.query({
      query:
        'SELECT properties FROM request_response_rmt FINAL WHERE organization_id = {org:UUID} AND request_id = {id:UUID}',
      query_params: { org: org.organizationId, id: ids.a1 },
      format: 'JSONEachRow',
    })
    const [row] = await result.json<{ properties: Record<string, string> }>()
    expect(row?.properties).toEqual({ team: 'red' })
    expect(await requestIds({ properties: { team: { equals: 'red' } } })).toEqual([ids.a2])
    expect(await requestIds({ properties: { team: { not_equals: 'red' } } })).toEqual(
      sorted(ids.a1 as string, ids.b1 as string, ids.b2 as string),
    )
    expect(
      await requestIds({ request_response_rmt: { properties: { reviewed: { equals: 'yes' } } } }),
    ).toEqual([ids.b2])
    await api.put(`/v1/request/${ids.a1}/property`, { key: 'team', value: 'red' })
    expect(await requestIds({ properties: { team: { equals: 'red' } } })).toEqual(
      sorted(ids.a1 as string, ids.a2 as string),
    )
  })
})

describe('scores in session filters', () => {
  it("a session's own score", async () => {
    expect(
      await sessionIds({ sessions_request_response_rmt: { scores: { resolved: { equals: true } } } }),
    ).toEqual(['b'])
  })

  it('avg, min and max of the request scores, over the requests the request conditions choose', async () => {
    // a: a1 = avg(0.9, 0.5) = 0.7, a2 = 0.5 → avg 0.6, min 0.5, max 0.7; b: b1 = 0.2.
    const agg = (name: string, op: string, value: number) => ({
      sessions_request_response_rmt: { [name]: { helpfulness: { [op]: value } } },
    })
    expect(await sessionIds(agg('avg_score', 'gte', 0.55))).toEqual(['a'])
    expect(await sessionIds(agg('avg_score', 'lt', 0.55))).toEqual(['b'])
    expect(await sessionIds(agg('min_score', 'equals', 0.5))).toEqual(['a'])
    expect(await sessionIds(agg('max_score', 'gt', 0.65))).toEqual(['a'])
    expect(await sessionIds(agg('max_score', 'gt', 5))).toEqual([])
    // Only a's failed request: its avg is 0.5.
    expect(
      await sessionIds({
        left: { request_response_rmt: { status: { equals: 500 } } },
        operator: 'and',
        right: agg('avg_score', 'equals', 0.5),
      }),
    ).toEqual(['a'])
    // The share of good feedback: a has none positive, b all.
    expect(
      await sessionIds({ sessions_request_response_rmt: { avg_score: { feedback: { gte: 0.5 } } } }),
    ).toEqual(['b'])
    // Request-level: sessions holding a request with the score.
    expect(await sessionIds({ scores: { tone: { equals: 'polite' } } })).toEqual(['b'])
    const bad = await api.post('/v1/session/query', {
      timeFilter: WINDOW,
      timezoneDifference: 0,
      filter: agg('avg_score', 'equals', 1).sessions_request_response_rmt && {
        sessions_request_response_rmt: { avg_score: { tone: { equals: 'polite' } } },
      },
    })
    expect(bad.status).toBe(400)
    expect(bad.error).toMatch(/avg_score.tone.*give a number/)
  })
})

describe('webhooks', () => {
  it('refuse a filter on scores: they come after the request completes', async () => {
    const res = await api.post('/v1/webhooks', {
      destination: 'https://hooks.example.com/x',
      config: { filter: { scores: { helpfulness: { gte: 0.5 } } } },
    })
    expect(res.status).toBe(400)
    expect(res.error).toMatch(
      /body.config.filter.scores.helpfulness.gte: a webhook filter cannot read scores/,
    )
  })
})
