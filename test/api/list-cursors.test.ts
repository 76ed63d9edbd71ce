import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// Keyset cursors on the Postgres lists: GET /v1/exports and GET /v1/webhooks/{id}/deliveries.

let tally: TestTally
let org: TestOrg
let other: TestOrg

interface Page {
  status: number
  data: { id: string }[] | null
  error: string | null
  next_cursor?: string | null
}

async function get(as: TestOrg, url: string): Promise<Page> {
  const res = await tally.app.inject({ method: 'GET', url, headers: as.headers })
  return { status: res.statusCode, ...JSON.parse(res.body) }
}

async function walk(as: TestOrg, url: string, between?: () => Promise<void>) {
  const seen: string[] = []
  let cursor: string | undefined
  for (let n = 0; n < 100; n++) {
    const page = await get(
      as,
      `${url}${url.includes('?') ? '&' : '?'}limit=3${cursor ? `&cursor=${cursor}` : ''}`,
    )
    if (page.status !== 200) throw new Error(`page ${n}: ${page.status} ${page.error}`)
    seen.push(...(page.data ?? []).map((r) => r.id))
    if (!page.next_cursor) return seen
    cursor = page.next_cursor
    await between?.()
  }
  throw new Error('the walk did not end')
}

// Ties on created_at, and times a microsecond apart (more precise than JavaScript's Date).
const TIMES = ['2026-11-01 00:00:00+00', '2026-11-01 00:00:00.000001+00', '2026-11-01 00:00:00.000002+00']

async function addExports(organizationId: string, n: number, createdAt?: string) {
  for (let i = 0; i < n; i++) {
    await tally.sql`
      insert into exports (organization_id, window_from, window_to, filter, format, status, last_error, created_at)
      values (${organizationId}, '2026-10-01', '2026-10-02', '{}', 'csv', 'failed', 'test',
              ${createdAt ?? (TIMES[i % 3] as string)})`
  }
}

async function addWebhook(organizationId: string) {
  const [row] = await tally.sql<{ id: string }[]>`
    insert into webhooks (organization_id, destination, hmac_key, state, disabled_reason)
    values (${organizationId}, 'https://example.com/hook', 'k', 'disabled', 'test') returning id`
  return (row as { id: string }).id
}

async function addDeliveries(webhookId: string, n: number, createdAt?: string) {
  for (let i = 0; i < n; i++) {
    await tally.sql`
      insert into webhook_deliveries (webhook_id, request_id, event, body, status, created_at)
      values (${webhookId}, ${randomUUID()}, 'request.processed', '\\x7b7d', 'failed',
              ${createdAt ?? (TIMES[i % 3] as string)})`
  }
}

beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  other = await tally.newOrg()
})

afterAll(async () => {
  await tally?.close()
})

describe('GET /v1/exports with a cursor', () => {
  it('walks the offset order, each export once, also while exports are added', async () => {
    await addExports(org.organizationId, 10)
    await addExports(other.organizationId, 4)
    const whole = await get(org, '/v1/exports?limit=100')
    expect(whole.next_cursor).toBeNull()
    expect(await walk(org, '/v1/exports')).toEqual((whole.data ?? []).map((r) => r.id))
    // Added during the walk: older than every row (ahead of it, listed) and newer (behind it, not).
    let added = 0
    const walked = await walk(org, '/v1/exports', async () => {
      added++
      await addExports(org.organizationId, 1, `2026-10-${28 - added} 00:00:00+00`)
      await addExports(org.organizationId, 1, '2027-01-01 00:00:00+00')
    })
    expect(new Set(walked).size).toBe(walked.length)
    expect(walked.length).toBe(10 + added)
  })

  it("refuses another organization's cursor and a cursor beside an offset", async () => {
    const first = await get(org, '/v1/exports?limit=2')
    const foreign = await get(other, `/v1/exports?limit=2&cursor=${first.next_cursor}`)
    expect(foreign.status).toBe(400)
    expect(foreign.error).toMatch(/^querystring\.cursor: is another organization's cursor/)
    const both = await get(org, `/v1/exports?limit=2&offset=2&cursor=${first.next_cursor}`)
    expect(both.error).toBe('querystring.offset: must be 0 or left out with cursor')
    const edited = Buffer.from(
      JSON.stringify({
        v: 1,
        org: org.organizationId,
        sort: 'exports:created_at:desc',
        after: ["now()'; --", randomUUID()],
      }),
    ).toString('base64url')
    const bad = await get(org, `/v1/exports?limit=2&cursor=${edited}`)
    expect(bad.status).toBe(400)
    expect(bad.error).toMatch(/^querystring\.cursor: holds a position this sort cannot have/)
  })
})

describe('GET /v1/webhooks/{id}/deliveries with a cursor', () => {
  it('walks the offset order, each delivery once; a cursor is bound to its webhook', async () => {
    const hook = await addWebhook(org.organizationId)
    const second = await addWebhook(org.organizationId)
    await addDeliveries(hook, 8)
    await addDeliveries(second, 2)
    const url = `/v1/webhooks/${hook}/deliveries`
    const whole = await get(org, `${url}?limit=100`)
    expect(whole.data?.length).toBe(8)
    expect(await walk(org, url)).toEqual((whole.data ?? []).map((r) => r.id))
    const first = await get(org, `${url}?limit=2`)
    const elsewhere = await get(org, `/v1/webhooks/${second}/deliveries?limit=2&cursor=${first.next_cursor}`)
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.error).toMatch(/^querystring\.cursor: was made for sort/)
    const foreign = await get(other, `${url}?limit=2&cursor=${first.next_cursor}`)
    expect(foreign.status).toBe(400)
  })
})
