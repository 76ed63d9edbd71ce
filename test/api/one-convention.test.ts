import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonExport, jsonSpan } from '../otlp/client.ts'
import { chatCompletion } from '../pipeline/client.ts'
import { promptClient } from '../prompts/client.ts'
import { apiAs } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// One paging scheme with its alias, one operator spelling with its alias, and Helicone's names
// on Helicone's paths only (docs/api.md, "Paging" and "One spelling"). Embedded mode: the intake
// answers once rows are in ClickHouse, so a query right after sees them.
describe('one convention for paging, operators and Helicone names', () => {
  let tally: TestTally
  beforeAll(async () => {
    tally = await startTestTally()
  })
  afterAll(() => tally?.close())

  /** An OTLP/JSON export of one chat span, with the given headers. */
  async function otlp(org: TestOrg, path: string, headers: Record<string, string>, model: string) {
    const body = jsonExport([
      jsonSpan({
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': model,
        },
      }),
    ])
    const res = await tally.app.inject({
      method: 'POST',
      url: path,
      headers: { ...org.headers, ...headers, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).not.toHaveProperty('partialSuccess.rejectedSpans')
  }

  type Row = { model: string; session_id: string; user_id: string; properties: Record<string, string> }

  it("stores properties as sent on Tally's intakes and Helicone's session properties on Helicone's paths only", async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const native = await api.post('/v1/request/log', {
      model: 'native-model',
      response: chatCompletion('native-model'),
      session_id: 's-1',
      session_name: 'Checkout',
      properties: { env: 'prod' },
    })
    expect(native.status).toBe(201)
    const helicone = await api.post(
      '/custom/v1/log',
      {
        providerRequest: {
          url: 'https://api.openai.com/v1/chat/completions',
          json: { model: 'helicone-model' },
        },
        providerResponse: { json: chatCompletion('helicone-model'), status: 200 },
        timing: { startTime: Date.now() - 1000, endTime: Date.now() },
      },
      { 'Helicone-Session-Id': 's-1', 'Helicone-Session-Name': 'Checkout', 'Helicone-Property-env': 'prod' },
    )
    expect(helicone.status).toBe(201)
    // Helicone-* headers on Tally's OTLP path are not Tally's: only Tally-* headers count there.
    await otlp(
      org,
      '/v1/traces',
      { 'Helicone-Session-Id': 'ignored', 'Helicone-User-Id': 'ignored', 'Tally-User-Id': 'u-otlp' },
      'otlp-tally-model',
    )
    await otlp(org, '/v1/trace/log', { 'Helicone-Session-Id': 's-1' }, 'otlp-helicone-model')

    const all = await api.post('/v1/request/query', { limit: 10, sort: { created_at: 'asc' } })
    expect(all.status).toBe(200)
    const byModel = Object.fromEntries((all.data as Row[]).map((r) => [r.model, r]))
    expect(byModel['native-model']).toMatchObject({ session_id: 's-1', properties: { env: 'prod' } })
    expect(byModel['native-model']?.properties).toEqual({ env: 'prod' })
    expect(byModel['helicone-model']?.properties).toEqual({
      env: 'prod',
      'Helicone-Session-Id': 's-1',
      'Helicone-Session-Name': 'Checkout',
    })
    expect(byModel['otlp-tally-model']).toMatchObject({ session_id: '', user_id: 'u-otlp' })
    expect(byModel['otlp-tally-model']?.properties).not.toHaveProperty('Helicone-Session-Id')
    expect(byModel['otlp-helicone-model']).toMatchObject({
      session_id: 's-1',
      properties: { 'Helicone-Session-Id': 's-1' },
    })

    // A filter on Helicone's session property reads the session: every intake's row matches.
    const bySession = await api.post('/v1/request/query', {
      filter: { request_response_rmt: { properties: { 'Helicone-Session-Id': { equals: 's-1' } } } },
      limit: 10,
    })
    expect((bySession.data as Row[]).map((r) => r.model).sort()).toEqual([
      'helicone-model',
      'native-model',
      'otlp-helicone-model',
    ])
    const byName = await api.post('/v1/request/query', {
      filter: { properties: { 'Helicone-Session-Name': { equals: 'Checkout' } } },
      limit: 10,
    })
    expect((byName.data as Row[]).map((r) => r.model).sort()).toEqual(['helicone-model', 'native-model'])
  })

  it('takes not_equals and not_contains as not-equals and not-contains, and names a wrong spelling as sent', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    await api.post(
      '/v1/request/log',
      ['alpha', 'beta', 'gamma'].map((model) => ({ model, response: chatCompletion(model) })),
    )
    const models = async (filter: unknown) => {
      const res = await api.post('/v1/request/query', { filter, limit: 10 })
      expect(res.status, res.error ?? '').toBe(200)
      return (res.data as Row[]).map((r) => r.model).sort()
    }
    for (const [snake, hyphen, value] of [
      ['not_equals', 'not-equals', 'beta'],
      ['not_contains', 'not-contains', 'AMM'],
    ] as const) {
      const a = await models({ request_response_rmt: { model: { [snake]: value } } })
      const b = await models({ request_response_rmt: { model: { [hyphen]: value } } })
      expect(a).toEqual(b)
      expect(a).toHaveLength(2)
    }
    const wrong = await api.post('/v1/request/query', {
      filter: { request_response_rmt: { created_at: { not_equals: 0 } } },
    })
    expect(wrong).toMatchObject({
      status: 400,
      error:
        'body.filter.request_response_rmt.created_at.not_equals: unknown operator for a timestamp field; use one of equals, gt, gte, lt, lte',
    })
    // A backslash escapes only %, _ and itself: another escape would be the engine's own.
    expect(
      await api.post('/v1/request/query', { filter: { request_response_rmt: { model: { like: 'a\\d%' } } } }),
    ).toMatchObject({
      status: 400,
      error:
        'body.filter.request_response_rmt.model.like: \\d is not an escape of like patterns; \\ escapes only %, _ and \\ (write \\\\ for a literal backslash)',
    })
    expect(await models({ request_response_rmt: { model: { like: 'al\\%pha' } } })).toEqual([])
    const camel = await api.post('/v1/request/query', {
      filter: { request_response_rmt: { model: { notEquals: 'x' } } },
    })
    expect(camel.status).toBe(400)
    expect(camel.error).toMatch(/^body\.filter\.request_response_rmt\.model\.notEquals: unknown operator/)
  })

  it('pages every list by offset/limit and by page/pageSize alike, and refuses a mix', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    await api.post(
      '/v1/request/log',
      Array.from({ length: 7 }, (_, i) => ({ model: `m${i}`, created_at: Date.UTC(2026, 10, 1, 0, i) })),
    )
    const ids = async (body: Record<string, unknown>) => {
      const res = await api.post('/v1/request/query', { sort: { created_at: 'asc' }, ...body })
      expect(res.status, res.error ?? '').toBe(200)
      return (res.data as Row[]).map((r) => r.model)
    }
    expect(await ids({ page: 1, pageSize: 3 })).toEqual(await ids({ offset: 3, limit: 3 }))
    expect(await ids({ page: 2, pageSize: 3 })).toEqual(['m6'])
    expect(await ids({ pageSize: 2 })).toEqual(['m0', 'm1'])
    expect(await api.post('/v1/request/query', { page: 1, pageSize: 3, offset: 3 })).toMatchObject({
      status: 400,
      error: 'body.offset: must be 0 or left out with page and pageSize',
    })
    expect(await api.post('/v1/request/query', { page: 1_000_000, pageSize: 2 })).toMatchObject({
      status: 400,
      error: 'body.page: page × pageSize must be at most 1000000',
    })
    expect(await api.post('/v1/request/query', { pageSize: 1001 })).toMatchObject({
      status: 400,
      error: 'body.pageSize: must be between 1 and 1000',
    })

    // Sessions: the same alias, the same rules beside a cursor.
    await api.post(
      '/v1/request/log',
      Array.from({ length: 5 }, (_, i) => ({
        model: 'x',
        session_id: `s${i}`,
        created_at: Date.UTC(2026, 10, 1, 1, i),
      })),
    )
    const sessionBody = (body: Record<string, unknown>) => ({
      timeFilter: { startTimeUnixMs: Date.UTC(2026, 10, 1), endTimeUnixMs: Date.UTC(2026, 10, 2) },
      timezoneDifference: 0,
      filter: 'all',
      sort: { created_at: 'asc' },
      ...body,
    })
    const sessions = async (body: Record<string, unknown>) => api.post('/v1/session/query', sessionBody(body))
    const paged = await sessions({ page: 1, pageSize: 2 })
    const offset = await sessions({ offset: 2, limit: 2 })
    expect(paged.status).toBe(200)
    expect(paged.data).toEqual(offset.data)
    expect((paged.data as { session_id: string }[]).map((s) => s.session_id)).toEqual(['s2', 's3'])
    const first = await tally.app.inject({
      method: 'POST',
      url: '/v1/session/query',
      headers: org.headers,
      payload: sessionBody({ limit: 2 }),
    })
    const cursor = first.json().next_cursor
    expect(cursor).toEqual(expect.any(String))
    expect(await sessions({ cursor, page: 1, pageSize: 2 })).toMatchObject({
      status: 400,
      error: 'body.page: must be 0 or left out with cursor',
    })
    expect((await sessions({ cursor, page: 0, pageSize: 2 })).status).toBe(200)

    // A list in a query string.
    expect((await api.get('/v1/exports?page=0&pageSize=5')).status).toBe(200)
    expect(await api.get('/v1/exports?page=1&pageSize=5&offset=5')).toMatchObject({
      status: 400,
      error: 'querystring.offset: must be 0 or left out with page and pageSize',
    })
    expect(await api.get('/v1/exports/schedules?pageSize=101')).toMatchObject({
      status: 400,
      error: 'querystring.pageSize: must be between 1 and 100',
    })
  })

  it('pages the prompt query by page/pageSize (the seed) or offset/limit, not both', async () => {
    const org = await tally.newOrg()
    const prompts = promptClient(tally, org)
    for (let i = 0; i < 12; i++) await prompts.create(`p-${String(i).padStart(2, '0')}`)
    const names = async (body: Record<string, unknown>) => {
      const res = await prompts.post('/v1/prompt-2025/query', { search: '', tagsFilter: [], ...body })
      expect(res.status, res.error ?? '').toBe(200)
      return (res.data as { name: string }[]).map((p) => p.name)
    }
    const seed = await names({ page: 1, pageSize: 10 })
    expect(seed).toHaveLength(2)
    expect(await names({ offset: 10, limit: 10 })).toEqual(seed)
    expect(await names({ offset: 10 })).toEqual(seed) // limit 10 unless given
    expect(await names({ limit: 3 })).toEqual((await names({ page: 0, pageSize: 10 })).slice(0, 3))
    const query = (body: Record<string, unknown>) =>
      prompts.post('/v1/prompt-2025/query', { search: '', tagsFilter: [], ...body })
    expect(await query({ page: 0, pageSize: 10, limit: 5 })).toMatchObject({
      status: 400,
      error: 'body.page: must be left out with offset and limit',
    })
    expect(await query({ page: 0 })).toMatchObject({
      status: 400,
      error: 'body.pageSize: must be one of 10, 25, 50, 100',
    })
    expect(await query({})).toMatchObject({
      status: 400,
      error: expect.stringMatching(/^body\.page: must be a number/),
    })
    expect(await query({ offset: 2_000_000_000 })).toMatchObject({
      status: 400,
      error: 'body.offset: must be at most 1000000000',
    })
    expect(await query({ page: 20_000_000, pageSize: 100 })).toMatchObject({
      status: 400,
      error: 'body.page: must be at most 10000000',
    })
    expect(await query({ limit: 101 })).toMatchObject({
      status: 400,
      error: 'body.limit: must be between 1 and 100',
    })
  })
})
