import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { rng } from '../support/random.ts'
import { requestApi } from './client.ts'

// Random filter trees through the HTTP route (compiler + query + ClickHouse together): every
// answer is a 200 or a 400 naming body.filter, never a 500, and never another org's rows.
describe('POST /v1/request/query with random filter trees', () => {
  let tally: TestTally
  let api: ReturnType<typeof requestApi>
  beforeAll(async () => {
    tally = await startTestTally()
    api = requestApi(tally)
  })
  afterAll(() => tally?.close())

  const FIELDS = [
    'request_id',
    'created_at',
    'model',
    'provider',
    'status',
    'latency',
    'time_to_first_token',
    'cost',
    'prompt_tokens',
    'completion_tokens',
    'total_tokens',
    'user_id',
    'cached',
    'prompt_id',
    'prompt_version',
    'target_url',
    'request_body',
    'response_body',
    'nope',
  ]
  const OPS = [
    'equals',
    'not-equals',
    'like',
    'ilike',
    'contains',
    'not-contains',
    'gt',
    'gte',
    'lt',
    'lte',
    'in',
  ]
  const VALUES: unknown[] = [
    'gpt-4o',
    "x' OR 1=1 --",
    '%',
    '_',
    '\\',
    '2026-11-01T00:00:00Z',
    '{org:UUID}',
    0,
    -1,
    1.5,
    1e300,
    true,
    false,
    null,
    [],
    {},
    '00000000-0000-4000-8000-000000000000',
    'a'.repeat(300),
  ]
  const KEYS = ['env', "k'ey", 'k`ey', '{x:String}', '', 'Helicone-Session-Id']

  function tree(r: () => number, depth: number): unknown {
    const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)] as T
    const roll = r()
    if (depth > 4 || roll < 0.45) {
      if (roll < 0.05) return pick(['all', {}, null, 'none', 42])
      const value = pick(VALUES)
      if (r() < 0.25)
        return { request_response_rmt: { properties: { [pick(KEYS)]: { [pick(OPS)]: value } } } }
      return {
        [r() < 0.95 ? 'request_response_rmt' : 'other_table']: { [pick(FIELDS)]: { [pick(OPS)]: value } },
      }
    }
    return {
      left: tree(r, depth + 1),
      operator: pick(['and', 'or', 'and', 'or', 'xor']),
      right: tree(r, depth + 1),
    }
  }

  it('answers 200 or a 400 naming body.filter for 300 random trees', async () => {
    const org = await tally.newOrg()
    const other = await tally.newOrg()
    await api.log(org, [{ model: 'gpt-4o', properties: { env: 'x' } }, { model: "x' OR 1=1 --" }])
    await api.log(other, [{ model: 'gpt-4o' }])
    const r = rng(4242)
    const seen = { ok: 0, bad: 0 }
    for (let i = 0; i < 300; i++) {
      const filter = tree(r, 0)
      const res = await api.query(org, { filter, limit: 5 })
      const where = `tree ${i}: ${JSON.stringify(filter).slice(0, 300)} → ${JSON.stringify(res).slice(0, 200)}`
      expect([200, 400], where).toContain(res.status)
      if (res.status === 200) {
        seen.ok++
        expect(res.data.length, where).toBeLessThanOrEqual(2)
      } else {
        seen.bad++
        expect(res.error, where).toMatch(/^body\.filter/)
      }
    }
    // The generator exercises both outcomes.
    expect(seen.ok).toBeGreaterThan(30)
    expect(seen.bad).toBeGreaterThan(30)
  })
})
