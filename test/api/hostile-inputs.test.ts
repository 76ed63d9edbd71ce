import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clickHouseTime } from '../../services/shared/timestamp.ts'
import { sampleBody } from '../prompts/client.ts'
import { apiAs, callApi } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// Inputs a hostile or careless caller sends: each is a 400 naming the field and the rule (never a
// 5xx), and nothing is stored.
let tally: TestTally
let org: TestOrg
let api: ReturnType<typeof apiAs>
beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  api = apiAs(tally.app, org)
})
afterAll(() => tally?.close())

const count = async (organizationId: string) => {
  const rs = await tally.clickhouse.query({
    query: 'SELECT count() AS n FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}',
    query_params: { org: organizationId },
    format: 'JSONEachRow',
  })
  return Number((await rs.json<{ n: number }>())[0]?.n)
}

const sessionBody = {
  timeFilter: { startTimeUnixMs: 0, endTimeUnixMs: 4_102_444_800_000 },
  timezoneDifference: 0,
  filter: 'all',
}

/** JSON text nested `depth` levels: {"a":{"a":…"leaf"}} (built as text: serialising it would recurse). */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`

/** Sends `json` as the body, as it is. */
const postText = (caller: TestOrg, url: string, json: string) =>
  tally.app
    .inject({
      method: 'POST',
      url,
      headers: { ...caller.headers, 'content-type': 'application/json' },
      payload: json,
    })
    .then((res) => ({ status: res.statusCode, error: res.json().error as string | null }))

describe('one rule for every value: text without NUL or lone surrogates, finite numbers, bounded nesting', () => {
  it.each([
    ['POST', '/v1/request/log', { model: 'gpt\u0000' }, 'body.model: must not contain NUL (\\u0000)'],
    [
      'POST',
      '/v1/request/log',
      { model: 'gpt\ud800' },
      'body.model: must not contain unpaired UTF-16 surrogates',
    ],
    [
      'POST',
      '/v1/request/log',
      { model: 'm', properties: { 'k\u0000': 'v' } },
      'body.properties: key "k\\u0000" must not contain NUL (\\u0000)',
    ],
    [
      'POST',
      '/v1/prompt-2025',
      { name: 'p\u0000', tags: [], promptBody: sampleBody() },
      'body.name: must not contain NUL',
    ],
    [
      'POST',
      '/v1/prompt-2025',
      { name: 'p', tags: ['\udfff'], promptBody: sampleBody() },
      'body.tags.0: must not',
    ],
    ['POST', '/v1/api-keys', { name: 'k\u0000' }, 'body.name: must not contain NUL'],
    ['POST', '/v1/session/query', { ...sessionBody, search: '\u0000' }, 'body.search: must not contain NUL'],
    [
      'POST',
      '/v1/webhooks',
      { destination: 'https://example.com/h', config: { propertyFilters: [{ key: 'a\u0000', value: 'b' }] } },
      'body.config.propertyFilters.0.key: must not contain NUL',
    ],
  ])('%s %s refuses %j', async (method, url, body, error) => {
    const res = await callApi(tally.app, method as 'POST', url, { as: org, body })
    expect(res.status).toBe(400)
    expect(res.data).toBeNull()
    expect(res.error).toContain(error)
  })

  it('refuses NUL in path parameters and the query string', async () => {
    const path = await callApi(tally.app, 'GET', '/v1/prompt-2025/a%00b', { as: org })
    expect(path.status).toBe(400)
    expect(path.error).toMatch(/^params\.[\w*]+: must not contain NUL/)
    const query = await callApi(tally.app, 'GET', '/v1/webhooks?x=%00', { as: org })
    expect(query).toMatchObject({ status: 400, error: 'query.x: must not contain NUL (\\u0000)' })
  })

  it('refuses JSON nested deeper than 100 levels, in a request body and in a prompt parameter', async () => {
    const other = await tally.newOrg()
    const log = await postText(other, '/v1/request/log', `{"model":"m","request":${nested(5_000)}}`)
    expect(log.status).toBe(400)
    expect(log.error).toMatch(/^body\.request(\.a)+: is nested deeper than 100 levels$/)
    const custom = await postText(
      other,
      '/custom/v1/log',
      `{"providerRequest":{"url":"x","json":${nested(10_000)}}}`,
    )
    expect(custom.status).toBe(400)
    const body = JSON.stringify({ name: 'deep', tags: [], promptBody: sampleBody({ extra: 'DEEP' }) })
    const prompt = await postText(other, '/v1/prompt-2025', body.replace('"DEEP"', nested(10_000)))
    expect(prompt.status).toBe(400)
    expect(prompt.error).toContain('is nested deeper than 100 levels')
    // 99 levels of caller data (plus the event itself) are fine.
    expect(
      (
        await callApi(tally.app, 'POST', '/v1/request/log', {
          as: other,
          body: { model: 'm', request: nested(98) },
        })
      ).status,
    ).toBe(201)
    expect(await count(other.organizationId)).toBe(1)
  })

  it('refuses a number literal beyond Float64 (it would parse to Infinity), wherever it is', async () => {
    const res = await postText(
      org,
      '/v1/request/log',
      '{"model":"m","response":{"usage":{"prompt_tokens":1e400}}}',
    )
    expect(res.status).toBe(400)
    expect(res.error).toBe('body.response.usage.prompt_tokens: must be a finite number')
  })
})

describe('numbers stored are numbers every later read can sum', () => {
  it('bounds cost_usd so that sums stay finite', async () => {
    const res = await api.post('/v1/request/log', { model: 'm', cost_usd: 1e308 })
    expect(res).toMatchObject({ status: 400, error: 'body.events.0.cost_usd: must be at most 1000000' })
    expect((await api.post('/v1/request/log', { model: 'm', cost_usd: 1_000_000 })).status).toBe(201)
  })

  it('answers a session page over rows whose costs overflow a sum (stored before the bound) with a finite total', async () => {
    const other = await tally.newOrg()
    const session = `s-${randomUUID()}`
    const now = Date.now()
    // Two rows as an older Tally could have stored them, straight into the table.
    await tally.clickhouse.insert({
      table: 'request_response_rmt',
      format: 'JSONEachRow',
      values: [1, 2].map((i) => ({
        organization_id: other.organizationId,
        request_id: randomUUID(),
        request_created_at: clickHouseTime(now - i * 1000),
        response_created_at: clickHouseTime(now - i * 1000),
        model: 'm',
        cost: 1e308,
        session_id: session,
      })),
    })
    const res = await callApi(tally.app, 'POST', '/v1/session/query', {
      as: other,
      body: { ...sessionBody, timeFilter: { startTimeUnixMs: now - 3_600_000, endTimeUnixMs: now + 60_000 } },
    })
    expect(res.error).toBeNull()
    const [row] = res.data
    expect(row.session_id).toBe(session)
    expect(Number.isFinite(row.total_cost)).toBe(true)
    expect(row.total_cost).toBeGreaterThan(1e307)
  })

  it('takes only time-zone offsets that exist (±14:00)', async () => {
    const body = (timezoneDifference: number) => ({ ...sessionBody, timezoneDifference })
    expect((await api.post('/v1/session/query', body(840))).status).toBe(200)
    expect(await api.post('/v1/session/query', body(1440))).toMatchObject({
      status: 400,
      error: 'body.timezoneDifference: must be between -840 and 840 (UTC+14:00 to UTC−14:00)',
    })
  })
})

describe('request ids in any letter case are one request', () => {
  it('a re-send in upper case replaces, and path parameters, filters and Helicone headers normalise too', async () => {
    const other = await tally.newOrg()
    const id = randomUUID()
    const upper = id.toUpperCase()
    expect(
      (
        await callApi(tally.app, 'POST', '/v1/request/log', {
          as: other,
          body: { request_id: id, model: 'a' },
        })
      ).data.request_ids,
    ).toEqual([id])
    const again = await callApi(tally.app, 'POST', '/v1/request/log', {
      as: other,
      body: { request_id: upper, model: 'b' },
    })
    expect(again.data.request_ids).toEqual([id])
    expect(await count(other.organizationId)).toBe(1)
    const got = await callApi(tally.app, 'GET', `/v1/request/${upper}`, { as: other })
    expect(got.status).toBe(200)
    expect(got.data).toMatchObject({ request_id: id, model: 'b' })
    for (const filter of [
      { request_response_rmt: { request_id: { equals: upper } } },
      { request_response_rmt: { request_id: { contains: upper.slice(0, 8) } } },
    ]) {
      const q = await callApi(tally.app, 'POST', '/v1/request/query', { as: other, body: { filter } })
      expect(q.status).toBe(200)
      expect(q.data.map((r: { request_id: string }) => r.request_id)).toEqual([id])
    }
    const helicone = await callApi(tally.app, 'POST', '/custom/v1/log', {
      as: other,
      headers: { 'Helicone-Request-Id': upper },
      body: {
        providerRequest: { url: 'custom-model-nopath', json: { model: 'c' }, meta: {} },
        providerResponse: { json: {}, status: 200, headers: {} },
        timing: { startTime: new Date().toISOString(), endTime: new Date().toISOString() },
      },
    })
    expect(helicone.status).toBe(201)
    expect(helicone.data.request_id).toBe(id)
    expect(await count(other.organizationId)).toBe(1)
  })
})

describe('unknown keys are refused, not dropped', () => {
  it.each([
    ['/v1/request/query', { fitler: { request: { model: { equals: 'x' } } } }, 'fitler'],
    ['/v1/request/log', { model: 'm', modle: 'x' }, 'modle'],
    ['/v1/request/log', { events: [{ model: 'm' }], extra: 1 }, 'extra'],
    ['/v1/session/query', { ...sessionBody, nameEqual: 'x' }, 'nameEqual'],
    ['/v1/session/count', { ...sessionBody, nameEqual: 'x' }, 'nameEqual'],
  ])('POST %s %j', async (url, body, key) => {
    const res = await callApi(tally.app, 'POST', url, { as: org, body })
    expect(res.status).toBe(400)
    expect(res.error).toMatch(new RegExp(`^body[.\\w]*: Unrecognized key: "${key}"`))
  })
})

describe('Helicone property headers named like Object.prototype members', () => {
  it('keeps toString, valueOf and constructor as properties', async () => {
    const other = await tally.newOrg()
    const res = await callApi(tally.url, 'POST', '/custom/v1/log', {
      as: other,
      headers: {
        'Helicone-Property-toString': 'a',
        'Helicone-Property-valueOf': 'b',
        'Helicone-Property-constructor': 'c',
      },
      body: {
        providerRequest: { url: 'custom-model-nopath', json: { model: 'c' }, meta: {} },
        providerResponse: { json: {}, status: 200, headers: {} },
        timing: { startTime: new Date().toISOString(), endTime: new Date().toISOString() },
      },
    })
    expect(res.status).toBe(201)
    const got = await callApi(tally.app, 'GET', `/v1/request/${res.data.request_id}`, { as: other })
    expect(got.data.properties).toEqual({ toString: 'a', valueOf: 'b', constructor: 'c' })
  })
})

describe('webhook destinations are parsed strictly at creation', () => {
  it.each([
    [' https://example.com/h', 'must not contain whitespace, control characters or backslashes'],
    ['https://example.com/h ', 'must not contain whitespace, control characters or backslashes'],
    ['https:\\\\example.com\\h', 'must not contain whitespace, control characters or backslashes'],
    ['https:///example.com/h', 'must be an https:// URL with a host and without credentials'],
    ['http://example.com/h', 'must be an https:// URL with a host and without credentials'],
    ['https://user:pw@example.com/h', 'must be an https:// URL with a host and without credentials'],
    ['https://127.0.0.1/h', 'must not point at a private, loopback or metadata address'],
    ['https://[::1]/h', 'must not point at a private, loopback or metadata address'],
    ['https://169.254.169.254/latest', 'must not point at a private, loopback or metadata address'],
    ['https://10.1.2.3/h', 'must not point at a private, loopback or metadata address'],
    ['https://localhost:8443/h', 'must not point at localhost'],
  ])('refuses %j', async (destination, rule) => {
    const res = await api.post('/v1/webhooks', { destination })
    expect(res).toMatchObject({ status: 400, error: `body.destination: ${rule}` })
  })

  it('stores a public https destination exactly as written', async () => {
    const res = await api.post('/v1/webhooks', { destination: 'https://hooks.example.com/tally?x=1' })
    expect(res.status).toBe(201)
    expect(res.data.destination).toBe('https://hooks.example.com/tally?x=1')
  })
})
