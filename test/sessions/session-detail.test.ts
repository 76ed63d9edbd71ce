import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { apiAs } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { body, insert, sessions } from './client.ts'

let tally: TestTally
let org: TestOrg

const SESSION = 'long-session'
const REQUESTS = 1500
const START = Date.parse('2026-11-01T10:00:00.000Z')

/**
 * 1,500 requests, each with a stored total_tokens above prompt + completion (a response whose usage
 * counted reasoning tokens too): the list adds prompt and completion, and so must the detail.
 */
function longSession(organization_id: string): RequestEvent[] {
  return Array.from({ length: REQUESTS }, (_, i) =>
    sampleEvent({
      organization_id,
      session_id: SESSION,
      session_name: i === REQUESTS - 1 ? 'Renamed at the end' : 'Long',
      created_at: new Date(START + i * 1000),
      completed_at: new Date(START + i * 1000 + 10),
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 100,
      cost_usd: 0.25,
    }),
  )
}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  await insert(tally, longSession(org.organizationId))
})
afterAll(() => tally?.close())

describe('GET /v1/session/{id} totals', () => {
  it('counts every request of a session longer than the list, with the totals of POST /v1/session/query', async () => {
    const res = await apiAs(tally.app, org).get(`/v1/session/${SESSION}`)
    expect(res.status, res.error ?? '').toBe(200)
    const detail = res.data as Record<string, unknown> & { requests: unknown[] }
    expect(detail.requests).toHaveLength(1000)
    expect(detail.truncated).toBe(true)

    const [listed] = await sessions(tally, org, body({ nameEquals: undefined, search: SESSION }))
    expect(listed).toMatchObject({ session_id: SESSION, total_requests: REQUESTS })
    expect({
      session_name: detail.session_name,
      total_requests: detail.total_requests,
      total_cost: detail.total_cost,
      total_tokens: detail.total_tokens,
    }).toEqual({
      session_name: listed?.session_name,
      total_requests: listed?.total_requests,
      total_cost: listed?.total_cost,
      total_tokens: listed?.total_tokens,
    })
    expect(detail).toMatchObject({
      session_name: 'Renamed at the end',
      total_requests: REQUESTS,
      total_tokens: REQUESTS * 15,
    })
    expect(detail.total_cost).toBeCloseTo(REQUESTS * 0.25, 9)
  })
})
