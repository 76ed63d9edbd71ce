import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toRow } from '../../services/shared/clickhouse/request-table.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

let tally: TestTally
let org: TestOrg
let other: TestOrg

interface Page {
  status: number
  data: Record<string, unknown>[] | null
  error: string | null
  next_cursor?: string | null
}

async function query(as: TestOrg, body: unknown): Promise<Page> {
  const res = await tally.app.inject({
    method: 'POST',
    url: '/v1/request/query',
    headers: as.headers,
    payload: body as object,
  })
  return { status: res.statusCode, ...JSON.parse(res.body) }
}

async function insert(events: RequestEvent[]) {
  await tally.clickhouse.insert({
    table: 'request_response_rmt',
    values: events.map(toRow),
    format: 'JSONEachRow',
  })
}

/** Every page of a cursor walk, calling `between(n)` after page n. */
async function walk(as: TestOrg, body: Record<string, unknown>, between?: (page: number) => Promise<void>) {
  const seen: Record<string, unknown>[] = []
  let cursor: string | undefined
  for (let n = 0; n < 1000; n++) {
    const page = await query(as, { ...body, ...(cursor ? { cursor } : {}) })
    if (page.status !== 200) throw new Error(`page ${n}: ${page.status} ${page.error}`)
    seen.push(...(page.data ?? []))
    if (!page.next_cursor) return seen
    cursor = page.next_cursor
    await between?.(n)
  }
  throw new Error('the walk did not end')
}

const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute))

// 40 requests over 10 distinct minutes (ties on created_at), costs with ties, some without TTFT.
function fixture(organization_id: string): RequestEvent[] {
  return Array.from({ length: 40 }, (_, i) =>
    sampleEvent({
      organization_id,
      created_at: at(100 + (i % 10)),
      completed_at: at(101 + (i % 10)),
      cost_usd: [0.5, 0.25, 0.5, 1e-7][i % 4] as number,
      time_to_first_token_ms: i % 3 === 0 ? null : i * 10,
      model: ['gpt-4o', 'claude', 'mistral'][i % 3] as string,
      user_id: `user-${i % 5}`,
    }),
  )
}

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => r.request_id as string)

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  other = await tally.newOrg()
  await insert(fixture(org.organizationId))
  await insert(fixture(other.organizationId))
})

afterAll(async () => {
  await tally?.close()
})

describe('keyset cursor on POST /v1/request/query', () => {
  it('walks every sort in the same order as one large offset page, each row once', async () => {
    const sorts = [
      { created_at: 'desc' },
      { created_at: 'asc' },
      { cost: 'asc' },
      { cost: 'desc' },
      { time_to_first_token: 'asc' },
      { time_to_first_token: 'desc' },
      { model: 'asc' },
      { user_id: 'desc' },
      { latency: 'asc' },
      { completed_at: 'desc' },
    ]
    for (const sort of sorts) {
      const whole = await query(org, { sort, limit: 1000 })
      expect(whole.next_cursor, JSON.stringify(sort)).toBeNull()
      const walked = await walk(org, { sort, limit: 7 })
      expect(ids(walked), JSON.stringify(sort)).toEqual(ids(whole.data ?? []))
      expect(new Set(ids(walked)).size).toBe(40)
    }
  })

  it('returns every row exactly once while rows arrive during the walk', async () => {
    const walker = await tally.newOrg()
    const before = fixture(walker.organizationId)
    await insert(before)
    const behind: RequestEvent[] = []
    const ahead: RequestEvent[] = []
    const walked = await walk(walker, { sort: { created_at: 'desc' }, limit: 6 }, async (page) => {
      // Each time: one row older than all so far (still ahead of the walk), one newer (passed),
      // one at a time the walk is inside (a tie on created_at), and one redelivered copy of a row.
      const more = [
        sampleEvent({ organization_id: walker.organizationId, created_at: at(90 - page) }),
        sampleEvent({ organization_id: walker.organizationId, created_at: at(500 + page) }),
        sampleEvent({ organization_id: walker.organizationId, created_at: at(105) }),
      ]
      behind.push(more[0] as RequestEvent)
      ahead.push(more[1] as RequestEvent)
      await insert([...more, before[page] as RequestEvent])
    })
    const count = new Map<string, number>()
    for (const id of ids(walked)) count.set(id, (count.get(id) ?? 0) + 1)
    expect([...count.values()].every((n) => n === 1)).toBe(true)
    for (const e of [...before, ...behind]) expect(count.get(e.request_id), e.request_id).toBe(1)
    for (const e of ahead) expect(count.has(e.request_id)).toBe(false)
  })

  it('walks rows hours to weeks apart by created_at, both ways, as one large page', async () => {
    const sparse = await tally.newOrg()
    const gaps = [0, 1, 2, 5, 30, 31, 200, 900, 901, 2_000, 2_001, 2_002, 9_000]
    await insert(
      gaps.map((h) =>
        sampleEvent({
          organization_id: sparse.organizationId,
          created_at: new Date(Date.now() + 3_600_000 - h * 3_600_000),
        }),
      ),
    )
    for (const direction of ['desc', 'asc']) {
      const sort = { created_at: direction }
      const whole = await query(sparse, { sort, limit: 100 })
      expect(whole.data?.length).toBe(gaps.length)
      for (const limit of [1, 2, 3, 5]) {
        expect(ids(await walk(sparse, { sort, limit })), `${direction} ${limit}`).toEqual(
          ids(whole.data ?? []),
        )
      }
    }
  })

  it('gives next_cursor with offset paging too, and null after a page that is not full', async () => {
    const first = await query(org, { limit: 30, offset: 0 })
    const rest = await query(org, { limit: 30, cursor: first.next_cursor })
    expect(rest.next_cursor).toBeNull()
    const whole = await query(org, { limit: 100 })
    expect([...ids(first.data ?? []), ...ids(rest.data ?? [])]).toEqual(ids(whole.data ?? []))
    // A full last page is followed by an empty one.
    const exact = await query(org, { limit: 40 })
    const after = await query(org, { limit: 40, cursor: exact.next_cursor })
    expect(after).toMatchObject({ status: 200, data: [], next_cursor: null })
  })

  it('keeps the filter while walking', async () => {
    const filter = { request_response_rmt: { model: { equals: 'claude' } } }
    const walked = await walk(org, { filter, limit: 4 })
    expect(walked.length).toBe(13)
    expect(walked.every((r) => r.model === 'claude')).toBe(true)
  })

  it("refuses another organization's cursor, another sort's, an edited one and one with offset", async () => {
    const page = await query(org, { limit: 5 })
    const cursor = page.next_cursor as string
    const foreign = await query(other, { limit: 5, cursor })
    expect(foreign).toMatchObject({ status: 400, data: null })
    expect(foreign.error).toMatch(/^body\.cursor: is another organization's cursor/)

    const sorted = await query(org, { limit: 5, cursor, sort: { cost: 'desc' } })
    expect(sorted.status).toBe(400)
    expect(sorted.error).toMatch(/^body\.cursor: was made for sort created_at:desc/)

    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString())
    const edits = [
      { ...decoded, org: other.organizationId },
      { ...decoded, after: ['not a time', decoded.after[1]] },
      { ...decoded, after: [decoded.after[0], "x' OR 1=1"] },
      { ...decoded, after: [decoded.after[0]] },
      { ...decoded, v: 2 },
      { ...decoded, extra: true },
    ]
    for (const edit of edits) {
      const res = await query(org, {
        limit: 5,
        cursor: Buffer.from(JSON.stringify(edit)).toString('base64url'),
      })
      expect(res.status, JSON.stringify(edit)).toBe(400)
      expect(res.error).toMatch(/^body\.cursor: /)
    }
    for (const text of [
      'not base64!',
      'AAAA',
      'x'.repeat(100_001),
      '',
      Buffer.from('\u0000').toString('base64url'),
    ]) {
      const res = await query(org, { limit: 5, cursor: text })
      expect(res.status).toBe(400)
      expect(res.error).toMatch(/^body\.cursor: /)
    }
    const withOffset = await query(org, { limit: 5, offset: 5, cursor })
    expect(withOffset.status).toBe(400)
    expect(withOffset.error).toMatch(/^body\.offset: must be 0 or left out with cursor/)
  })
})

describe('fields on POST /v1/request/query', () => {
  it('answers only the named fields, bodies only when named', async () => {
    const page = await query(org, { limit: 3, fields: ['request_id', 'cost_usd', 'request_body'] })
    expect(page.status).toBe(200)
    for (const row of page.data ?? []) {
      expect(Object.keys(row).sort()).toEqual(['cost_usd', 'request_body', 'request_id'])
      expect(row.request_body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    }
    // The sort column is read for the cursor, not shown.
    const costs = await walk(org, { limit: 9, fields: ['model'], sort: { cost: 'asc' } })
    expect(costs.length).toBe(40)
    expect(costs.every((r) => Object.keys(r).join() === 'model')).toBe(true)
  })

  it('refuses unknown, repeated or no fields, and includeBody beside them', async () => {
    const cases: [unknown, RegExp][] = [
      [{ fields: ['request_id', 'organization_id'] }, /^body\.fields\.1: must be fields of a request record/],
      [{ fields: ['cost', '1); DROP TABLE x'] }, /^body\.fields\.0: must be fields of a request record/],
      [{ fields: [] }, /^body\.fields: must name at least one field/],
      [{ fields: ['model', 'model'] }, /^body\.fields: must not name a field twice/],
      [{ fields: ['model'], includeBody: true }, /^body\.includeBody: must be left out with fields/],
    ]
    for (const [body, error] of cases) {
      const res = await query(org, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.error).toMatch(error)
    }
  })
})
