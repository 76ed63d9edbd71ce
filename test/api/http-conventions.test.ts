import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'

// HTTP as a client library or a browser expects it: 405 with Allow, 415 for non-JSON bodies,
// WWW-Authenticate on 401, CORS for the configured origins only.
let tally: TestTally
let org: TestOrg
const APP = 'https://app.example.com'
const ADMIN_KEY = `tally-admin-${randomUUID()}`
const admin = { authorization: `Bearer ${ADMIN_KEY}` }
beforeAll(async () => {
  tally = await startTestTally({
    env: { TALLY_CORS_ORIGINS: `${APP}, https://admin.example.com`, TALLY_ADMIN_API_KEY: ADMIN_KEY },
  })
  org = await tally.newOrg()
})
afterAll(() => tally?.close())

describe('methods, media types and authentication', () => {
  it('answers a wrong method on a known path 405 with Allow, in the envelope; an unknown path stays 404', async () => {
    const get = await tally.app.inject({ method: 'GET', url: '/v1/session/query', headers: org.headers })
    expect(get.statusCode).toBe(405)
    expect(get.headers.allow).toBe('POST')
    expect(get.json()).toEqual({
      data: null,
      error: 'Method GET is not allowed on /v1/session/query; allowed: POST',
    })
    const del = await tally.app.inject({ method: 'DELETE', url: '/v1/webhooks', headers: org.headers })
    expect(del.statusCode).toBe(405)
    expect(String(del.headers.allow).split(', ')).toEqual(['GET', 'HEAD', 'POST'])
    const withParam = await tally.app.inject({
      method: 'PUT',
      url: '/v1/request/5f0e7d1c-0000-4000-8000-000000000000',
      headers: org.headers,
    })
    expect(withParam.statusCode).toBe(405)
    expect(withParam.headers.allow).toBe('GET, HEAD')
    const unknown = await tally.app.inject({ method: 'GET', url: '/v1/nothing-here', headers: org.headers })
    expect(unknown.statusCode).toBe(404)
  })

  it('answers a text/plain body 415, as for any body that is not JSON', async () => {
    for (const type of ['text/plain', 'application/xml']) {
      const res = await tally.app.inject({
        method: 'POST',
        url: '/v1/request/log',
        headers: { ...org.headers, 'content-type': type },
        payload: '{"model":"m"}',
      })
      expect(res.statusCode).toBe(415)
      expect(res.json()).toEqual({
        data: null,
        error: `Content-Type: must be application/json, got ${JSON.stringify(type)}`,
      })
    }
  })

  it('sends WWW-Authenticate: Bearer with every 401', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }]) {
      const res = await tally.app.inject({ method: 'GET', url: '/v1/webhooks', headers })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Bearer')
    }
  })
})

describe('JSON bodies are application/json: any other media type is a 415 that changes nothing', () => {
  // [Content-Type or undefined for none, the answer's error]
  const REFUSED: [string | undefined, string][] = [
    ['text/plain', 'Content-Type: must be application/json, got "text/plain"'],
    ['text/plain; charset=utf-8', 'Content-Type: must be application/json, got "text/plain; charset=utf-8"'],
    // A +json type means other semantics than the route's (RFC 6902 operations, RFC 7396 merge).
    [
      'application/json-patch+json',
      'Content-Type: must be application/json, got "application/json-patch+json"',
    ],
    [
      'application/merge-patch+json',
      'Content-Type: must be application/json, got "application/merge-patch+json"',
    ],
    [
      'application/x-www-form-urlencoded',
      'Content-Type: must be application/json, got "application/x-www-form-urlencoded"',
    ],
    [undefined, 'Content-Type: is missing; a body must be application/json'],
  ]
  const retentionOf = async (id: string) =>
    (
      await tally.sql<
        { retention_days: number | null }[]
      >`select retention_days from organizations where id = ${id}`
    )[0]?.retention_days

  it("refuses them on the admin PATCH /admin/v1/organizations/{id}: the retention stays the instance's", async () => {
    const url = `/admin/v1/organizations/${org.organizationId}`
    for (const [type, error] of REFUSED) {
      const res = await tally.app.inject({
        method: 'PATCH',
        url,
        headers: { ...admin, ...(type === undefined ? {} : { 'content-type': type }) },
        payload: type?.includes('json-patch')
          ? '[{"op":"replace","path":"/retention_days","value":7}]'
          : '{"retention_days":7}',
      })
      expect(res.statusCode, `${type}: ${res.body}`).toBe(415)
      expect(res.json(), String(type)).toEqual({ data: null, error })
      expect(await retentionOf(org.organizationId)).toBeNull()
    }
    // What a browser's or Node's fetch sends for a string body: text/plain;charset=UTF-8.
    const fetched = await fetch(`${tally.url}${url}`, {
      method: 'PATCH',
      headers: admin,
      body: '{"retention_days":7}',
    })
    expect(fetched.status).toBe(415)
    expect(await fetched.json()).toEqual({
      data: null,
      error: 'Content-Type: must be application/json, got "text/plain;charset=UTF-8"',
    })
    expect(await retentionOf(org.organizationId)).toBeNull()
  })

  it("refuses them on an organization's POST /v1/webhooks: no webhook is made", async () => {
    for (const [type, error] of REFUSED) {
      const res = await tally.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: { ...org.headers, ...(type === undefined ? {} : { 'content-type': type }) },
        payload: '{"destination":"https://example.com/hook"}',
      })
      expect(res.statusCode, `${type}: ${res.body}`).toBe(415)
      expect(res.json(), String(type)).toEqual({ data: null, error })
    }
    const listed = await tally.app.inject({ method: 'GET', url: '/v1/webhooks', headers: org.headers })
    expect(listed.json()).toEqual({ data: [], error: null })
  })

  it('takes application/json in any letter case, with parameters such as charset', async () => {
    const other = await tally.newOrg()
    const url = `/admin/v1/organizations/${other.organizationId}`
    try {
      for (const [type, days] of [
        ['application/json; charset=utf-8', 7],
        ['APPLICATION/JSON', 14],
        ['Application/Json; Charset=UTF-8', null],
      ] as const) {
        const res = await tally.app.inject({
          method: 'PATCH',
          url,
          headers: { ...admin, 'content-type': type },
          payload: JSON.stringify({ retention_days: days }),
        })
        expect(res.statusCode, `${type}: ${res.body}`).toBe(200)
        expect(res.json().data).toMatchObject({ id: other.organizationId, retention_days: days })
        expect(await retentionOf(other.organizationId)).toBe(days)
      }
    } finally {
      // Other test files' starts read every organization's own days: leave none behind.
      await tally.app.inject({
        method: 'PATCH',
        url,
        headers: { ...admin, 'content-type': 'application/json' },
        payload: '{"retention_days":null}',
      })
    }
  })
})

describe('CORS (TALLY_CORS_ORIGINS)', () => {
  it('answers a preflight from a configured origin, allowing Authorization and Content-Type', async () => {
    const res = await tally.app.inject({
      method: 'OPTIONS',
      url: '/v1/request/query',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    expect(String(res.headers['access-control-allow-headers'])).toMatch(/Authorization/)
    expect(String(res.headers['access-control-allow-headers'])).toMatch(/Content-Type/)
    expect(String(res.headers['access-control-allow-headers'])).toMatch(/X-Tally-Api-Key/)
    expect(String(res.headers['access-control-allow-methods'])).toMatch(/POST/)
  })

  it('exposes the rate-limit and request-id headers to that origin, and nothing to others', async () => {
    const res = await tally.app.inject({
      method: 'GET',
      url: '/v1/webhooks',
      headers: { ...org.headers, origin: APP },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe(APP)
    const exposed = String(res.headers['access-control-expose-headers'])
    for (const h of ['RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id'])
      expect(exposed).toContain(h)
    const other = await tally.app.inject({
      method: 'GET',
      url: '/v1/webhooks',
      headers: { ...org.headers, origin: 'https://evil.example.com' },
    })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    // No Access-Control-* header at all for an origin not configured, preflight included.
    const preflight = await tally.app.inject({
      method: 'OPTIONS',
      url: '/v1/webhooks',
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    })
    for (const answer of [other, preflight])
      expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([])
  })

  it('sends no CORS headers when no origin is configured', async () => {
    const plain = await startTestTally()
    try {
      const res = await plain.app.inject({
        method: 'OPTIONS',
        url: '/v1/request/query',
        headers: { origin: APP, 'access-control-request-method': 'POST' },
      })
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
      expect(res.statusCode).toBe(405)
    } finally {
      await plain.close()
    }
  })
})

describe('request metrics at /metrics', () => {
  it('counts answers by route template and status, times them, and times ClickHouse requests', async () => {
    const before = await metric(
      'tally_http_requests_total',
      '{method="GET",route="/v1/request/:id",status="404"}',
    )
    const id = '5f0e7d1c-0000-4000-8000-000000000001'
    expect(
      (await tally.app.inject({ method: 'GET', url: `/v1/request/${id}`, headers: org.headers })).statusCode,
    ).toBe(404)
    expect(
      await metric('tally_http_requests_total', '{method="GET",route="/v1/request/:id",status="404"}'),
    ).toBe(before + 1)
    const text = (await tally.app.inject({ method: 'GET', url: '/metrics' })).body
    // The template, never the id: one series per route.
    expect(text).not.toContain(id)
    expect(text).toMatch(
      /^tally_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/request\/:id"\} \d+$/m,
    )
    expect(
      await metric('tally_clickhouse_request_duration_seconds_count', '{operation="query",outcome="ok"}'),
    ).toBeGreaterThan(0)
    // Postgres: the key look-ups of the requests above, and newOrg's transaction.
    expect(
      await metric('tally_postgres_query_duration_seconds_count', '{operation="query",outcome="ok"}'),
    ).toBeGreaterThan(0)
    expect(
      await metric('tally_postgres_query_duration_seconds_count', '{operation="transaction",outcome="ok"}'),
    ).toBeGreaterThan(0)
  })
})

describe('/metrics for Prometheus', () => {
  // promtool from PATH or Debian's package (scripts/promtool.sh); CI must have it.
  const found = spawnSync('bash', ['scripts/promtool.sh'], { encoding: 'utf8' })
  const promtool = found.status === 0 ? found.stdout.trim() : undefined
  if (!promtool && (process.env.CI === 'true' || process.env.CI === '1'))
    throw new Error(`CI needs promtool: ${found.stderr}`)
  if (!promtool) console.warn('!!! no promtool: the /metrics lint is SKIPPED !!!')

  it.skipIf(!promtool)('passes `promtool check metrics` with no warning', async () => {
    // Every kind of series present: an answer, a ClickHouse request.
    await tally.app.inject({ method: 'GET', url: '/v1/webhooks', headers: org.headers })
    const text = (await tally.app.inject({ method: 'GET', url: '/metrics' })).body
    const checked = spawnSync(promtool as string, ['check', 'metrics'], { input: text, encoding: 'utf8' })
    expect(`${checked.stdout}${checked.stderr}`).toBe('')
    expect(checked.status).toBe(0)
  })
})

describe('one wording for bounds', () => {
  it('says "at least" and "at most" on every route', async () => {
    const answers = await Promise.all([
      tally.app.inject({
        method: 'POST',
        url: '/v1/request/log',
        headers: org.headers,
        payload: { model: 'm', prompt_tokens: -1 },
      }),
      tally.app.inject({
        method: 'POST',
        url: '/v1/request/log',
        headers: org.headers,
        payload: { model: 'm', cost_usd: -1 },
      }),
      tally.app.inject({
        method: 'POST',
        url: '/v1/request/query',
        headers: org.headers,
        payload: { offset: -1 },
      }),
      tally.app.inject({
        method: 'POST',
        url: '/v1/request/query',
        headers: org.headers,
        payload: { offset: 2_000_000 },
      }),
      tally.app.inject({
        method: 'POST',
        url: '/v1/prompt-2025/query',
        headers: org.headers,
        payload: { search: '', tagsFilter: [], page: -1, pageSize: 10 },
      }),
    ])
    expect(answers.map((a) => a.json().error)).toEqual([
      'body.events.0.prompt_tokens: must be at least 0',
      'body.events.0.cost_usd: must be at least 0',
      'body.offset: must be at least 0',
      'body.offset: must be at most 1000000',
      'body.page: must be at least 0',
    ])
  })
})
