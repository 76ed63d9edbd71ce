import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_SCORE_LEAVES } from '../../services/shared/filters/parse.ts'
import { apiAs } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// What a hostile (or merely unlucky) tenant reached on the score surfaces in a red-team review,
// each fixed: every test failed before its fix.

let tally: TestTally
let org: TestOrg
let api: ReturnType<typeof apiAs>

const AT = Date.parse('2026-11-20T10:00:00.000Z')
const WINDOW = { startTimeUnixMs: AT - 3_600_000, endTimeUnixMs: AT + 3_600_000 }

async function log(fields: Record<string, unknown>): Promise<string> {
  const res = await api.post('/v1/request/log', {
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

/** A balanced `and` tree of the leaves (depth about log2 of their number, far below MAX_DEPTH). */
function balanced(leaves: unknown[]): unknown {
  if (leaves.length === 1) return leaves[0]
  const mid = Math.floor(leaves.length / 2)
  return { left: balanced(leaves.slice(0, mid)), operator: 'and', right: balanced(leaves.slice(mid)) }
}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  api = apiAs(tally.app, org)
})
afterAll(() => tally?.close())

describe('session filters with score aggregates', () => {
  // Each avg/min/max_score leaf once carried the whole request-level condition, so the SQL grew as
  // (request leaves) × (aggregate leaves): the engine refused filters well inside MAX_LEAVES (AST
  // too big, or max_query_size with a fragment of Tally's SQL). The chosen requests are now one
  // named subquery, and score conditions are at most MAX_SCORE_LEAVES per filter.
  const leaves = (aggregates: number) => [
    ...Array.from({ length: 100 }, (_, i) => ({ properties: { p: { 'not-equals': `v${i}` } } })),
    ...Array.from({ length: aggregates }, () => ({
      sessions_request_response_rmt: { avg_score: { s0: { gte: 0 } } },
    })),
  ]
  const query = (filter: unknown) =>
    api.post('/v1/session/query', { timeFilter: WINDOW, timezoneDifference: 0, filter, limit: 10 })

  it('answers 100 property leaves beside 50 avg_score leaves', async () => {
    const id = await log({ session_id: 'agg', properties: { p: 'x' } })
    await api.post(`/v1/request/${id}/score`, { scores: { s0: 0.5 } })
    const res = await query(balanced(leaves(MAX_SCORE_LEAVES)))
    expect(res.status, res.error ?? '').toBe(200)
    expect(res.data.map((s: { session_id: string }) => s.session_id)).toEqual(['agg'])
  })

  it('refuses a 51st score condition with a 400 naming it', async () => {
    const res = await query(balanced(leaves(MAX_SCORE_LEAVES + 1)))
    expect(res.status).toBe(400)
    expect(res.error).toMatch(
      /^body\.filter\.[a-z_.]+avg_score\.s0: the filter has more than 50 score and feedback conditions$/,
    )
  })
})

describe('score names of astral characters', () => {
  // The score API counts a name's 200 characters as code points; the filter parser once counted
  // UTF-16 units, so a name of 101 to 200 emoji was stored but could never be filtered on.
  it('filters on every name the score API takes', async () => {
    const id = await log({ session_id: 'emoji' })
    const name = '😀'.repeat(101)
    const made = await api.post('/v1/scores', { target: { request_id: id }, name, value: 1 })
    expect(made.status).toBe(202)
    const res = await api.post('/v1/request/query', { filter: { scores: { [name]: { gte: 1 } } } })
    expect(res.status, res.error ?? '').toBe(200)
    expect(res.data.map((r: { request_id: string }) => r.request_id)).toEqual([id])
  })
})

describe('score ids', () => {
  // An explicit id was once answered as sent, while GET /v1/scores shows it lower case.
  it('answers an explicit id as it is stored', async () => {
    const id = await log({})
    const given = randomUUID().toUpperCase()
    const made = await api.post('/v1/scores', { id: given, target: { request_id: id }, name: 'up', value: 1 })
    const [stored] = (await api.get(`/v1/scores?request_id=${id}`)).data
    expect(made.data.id).toBe(stored.id)
  })
})

describe('listing scores', () => {
  // A page of the largest limit (1,000) of scores with the longest comments (4,000 characters,
  // 16 KB of emoji) stays within the answer's byte limit (32 MiB); 10,000 once did not.
  it('answers limit=1000 whatever the stored comments', async () => {
    const id = await log({})
    const comment = '😀'.repeat(4_000)
    for (let i = 0; i < 1000; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          api.post('/v1/scores', { target: { request_id: id }, name: `page${i + j}`, value: 1, comment }),
        ),
      )
    const res = await api.get(`/v1/scores?request_id=${id}&limit=1000`)
    expect(res.status, res.error ?? '').toBe(200)
    expect(res.data).toHaveLength(1000)
    const longer = await api.post('/v1/scores', {
      target: { request_id: id },
      name: 'x',
      value: 1,
      comment: `${comment}!`,
    })
    expect(longer.error).toMatch(/body.comment: must be at most 4000 characters/)
  }, 60_000)
})

describe('names, keys and values no filter could read back', () => {
  it('refuses __proto__, an unbounded number, a session property in any case', async () => {
    const id = await log({})
    const target = { request_id: id }
    expect((await api.post('/v1/scores', { target, name: '__proto__', value: 1 })).error).toMatch(
      /body.name: must not be __proto__/,
    )
    expect((await api.put(`/v1/request/${id}/property`, { key: '__proto__', value: 'x' })).error).toMatch(
      /body.key: must not be __proto__/,
    )
    expect((await api.post('/v1/scores', { target, name: 'big', value: 1.7e308 })).error).toMatch(
      /body.value: must be between -1000000000000000 and 1000000000000000/,
    )
    expect((await api.post('/v1/scores', { target, name: 'big', value: -1e15 })).status).toBe(202)
    expect(
      (await api.post('/v1/score-configs', { name: 'wide', data_type: 'numeric', max: 1e300 })).error,
    ).toMatch(/body.max: must be between/)
    expect(
      (await api.put(`/v1/request/${id}/property`, { key: 'helicone-session-id', value: 'x' })).error,
    ).toMatch(/body.key/)
  })

  it('names at most ten categories in a refusal', async () => {
    const categories = Array.from({ length: 100 }, (_, i) => `${'c'.repeat(490)}${i}`)
    expect(
      (await api.post('/v1/score-configs', { name: 'many', data_type: 'categorical', categories })).status,
    ).toBe(201)
    const res = await api.post('/v1/scores', {
      target: { request_id: await log({}) },
      name: 'many',
      value: 'other',
    })
    expect(res.status).toBe(400)
    expect(res.error).toMatch(/and 90 more \(GET \/v1\/score-configs\)/)
    expect((res.error ?? '').length).toBeLessThan(2_000)
  })
})
