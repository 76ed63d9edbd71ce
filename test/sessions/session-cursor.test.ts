import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { body, insert } from './client.ts'

let tally: TestTally
let org: TestOrg
let other: TestOrg

interface Page {
  status: number
  data: Record<string, unknown>[] | null
  error: string | null
  next_cursor?: string | null
}

async function query(as: TestOrg, payload: unknown): Promise<Page> {
  const res = await tally.app.inject({
    method: 'POST',
    url: '/v1/session/query',
    headers: as.headers,
    payload: payload as object,
  })
  return { status: res.statusCode, ...JSON.parse(res.body) }
}

async function walk(
  as: TestOrg,
  payload: Record<string, unknown>,
  between?: (page: number) => Promise<void>,
) {
  const seen: Record<string, unknown>[] = []
  let cursor: string | undefined
  for (let n = 0; n < 1000; n++) {
    const page = await query(as, { ...payload, ...(cursor ? { cursor } : {}) })
    if (page.status !== 200) throw new Error(`page ${n}: ${page.status} ${page.error}`)
    seen.push(...(page.data ?? []))
    if (!page.next_cursor) return seen
    cursor = page.next_cursor
    await between?.(n)
  }
  throw new Error('the walk did not end')
}

const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute))
const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.session_id as string)

/** 30 sessions of 1 to 3 requests; starts, costs and request counts tie between sessions. */
function fixture(organization_id: string, prefix = 's'): RequestEvent[] {
  return Array.from({ length: 30 }, (_, i) =>
    Array.from({ length: 1 + (i % 3) }, (_, j) =>
      sampleEvent({
        organization_id,
        session_id: `${prefix}-${String(i).padStart(2, '0')}`,
        created_at: at(60 + (i % 10) + j * 7),
        cost_usd: [0.1, 0.25, 0.1][i % 3] as number,
        latency_ms: 100 * (i % 4),
      }),
    ),
  ).flat()
}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  other = await tally.newOrg()
  await insert(tally, fixture(org.organizationId))
  await insert(tally, fixture(other.organizationId))
})

afterAll(async () => {
  await tally?.close()
})

describe('keyset cursor on POST /v1/session/query', () => {
  it('walks every sort in the order of one large page, each session once', async () => {
    const sorts = [
      { created_at: 'desc' },
      { created_at: 'asc' },
      { latest_request_created_at: 'desc' },
      { total_cost: 'asc' },
      { total_cost: 'desc' },
      { total_requests: 'desc' },
      { avg_latency: 'asc' },
    ]
    for (const sort of sorts) {
      const whole = await query(org, body({ sort, limit: 1000 }))
      expect(whole.next_cursor, JSON.stringify(sort)).toBeNull()
      expect(whole.data?.length).toBe(30)
      const walked = await walk(org, body({ sort, limit: 4 }))
      expect(ids(walked), JSON.stringify(sort)).toEqual(ids(whole.data ?? []))
    }
  })

  it('keeps search and filter while walking', async () => {
    const filter = { request_response_rmt: { cost: { gt: 0.2 } } }
    const walked = await walk(org, body({ filter, search: 's-1', limit: 2 }))
    expect(ids(walked).sort()).toEqual(['s-10', 's-13', 's-16', 's-19'])
  })

  it('returns every session exactly once while sessions arrive during the walk', async () => {
    const walker = await tally.newOrg()
    await insert(tally, fixture(walker.organizationId))
    const older: string[] = []
    const newer: string[] = []
    const walked = await walk(walker, body({ sort: { created_at: 'desc' }, limit: 4 }), async (page) => {
      // A session starting before every one so far (the walk will reach it) and one after all
      // (already passed); and one more request in a session already listed.
      older.push(`old-${page}`)
      newer.push(`new-${page}`)
      await insert(tally, [
        sampleEvent({
          organization_id: walker.organizationId,
          session_id: `old-${page}`,
          created_at: at(50 - page),
        }),
        sampleEvent({
          organization_id: walker.organizationId,
          session_id: `new-${page}`,
          created_at: at(200 + page),
        }),
        sampleEvent({ organization_id: walker.organizationId, session_id: 's-00', created_at: at(190) }),
      ])
    })
    const count = new Map<string, number>()
    for (const id of ids(walked)) count.set(id, (count.get(id) ?? 0) + 1)
    expect([...count.values()].every((n) => n === 1)).toBe(true)
    const expected = [...Array.from({ length: 30 }, (_, i) => `s-${String(i).padStart(2, '0')}`), ...older]
    expect([...count.keys()].sort()).toEqual(expected.sort())
    expect(newer.some((id) => count.has(id))).toBe(false)
  })

  it("refuses another organization's cursor, another sort's, an edited one and one with offset", async () => {
    const page = await query(org, body({ limit: 3 }))
    const cursor = page.next_cursor as string
    const foreign = await query(other, body({ limit: 3, cursor }))
    expect(foreign).toMatchObject({ status: 400, data: null })
    expect(foreign.error).toMatch(/^body\.cursor: is another organization's cursor/)
    const sorted = await query(org, body({ limit: 3, cursor, sort: { total_cost: 'desc' } }))
    expect(sorted.error).toMatch(/^body\.cursor: was made for sort created_at:desc/)
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString())
    for (const edit of [
      { ...decoded, after: ['yesterday', decoded.after[1]] },
      { ...decoded, after: [1e300, decoded.after[1]] },
      { ...decoded, after: [decoded.after[0], 7] },
    ]) {
      const res = await query(
        org,
        body({ limit: 3, cursor: Buffer.from(JSON.stringify(edit)).toString('base64url') }),
      )
      expect(res.status, JSON.stringify(edit)).toBe(400)
      expect(res.error).toMatch(/^body\.cursor: holds a position this sort cannot have|^body\.cursor: is not/)
    }
    const withOffset = await query(org, body({ limit: 3, offset: 3, cursor }))
    expect(withOffset.status).toBe(400)
    expect(withOffset.error).toBe('body.offset: must be 0 or left out with cursor')
  })
})
