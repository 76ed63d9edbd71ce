import { randomUUID } from 'node:crypto'
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import type { Sql } from '../../services/shared/postgres.ts'
import { apiAs } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import type { TestOrg } from '../support/harness.ts'
import { secondApi } from '../support/second-api.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook, deliveriesOf, storeWebhook } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'

// Private networks stay refused here (the default): the receiver on 127.0.0.1 must never be reached.
const suite = webhookSuite()

const call = (
  org: TestOrg,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: Record<string, unknown>,
) =>
  suite.tally.app.inject({ method, url, headers: org.headers, ...(payload === undefined ? {} : { payload }) })

describe('webhook API', () => {
  it('create with defaults, return the key once, and list without it', async () => {
    const org = await suite.tally.newOrg()
    const res = await call(org, 'POST', '/v1/webhooks', { destination: 'https://hooks.example.com/tally' })
    expect(res.statusCode, res.body).toBe(201)
    const { data } = res.json()
    expect(data).toEqual({
      id: expect.any(String),
      destination: 'https://hooks.example.com/tally',
      hmac_key: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      config: { sampleRate: 100, propertyFilters: [] },
      includeData: true,
      state: 'active',
      disabled_reason: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    })
    expect(Buffer.from(data.hmac_key.slice(6), 'base64')).toHaveLength(32)

    const list = await call(org, 'GET', '/v1/webhooks')
    expect(list.json()).toEqual({ data: [{ ...data, hmac_key: undefined }], error: null })
    expect(list.body).not.toContain(data.hmac_key)
  })

  it.each([
    [
      { destination: 'http://hooks.example.com' },
      'body.destination: must be an https:// URL with a host and without credentials',
    ],
    [
      { destination: 'https://user:pw@hooks.example.com' },
      'body.destination: must be an https:// URL with a host and without credentials',
    ],
    [{}, 'body.destination: must be a string'],
    [
      { destination: 'https://a.example', config: { sampleRate: 101 } },
      'body.config.sampleRate: must be between 0 and 100',
    ],
    [
      { destination: 'https://a.example', config: { sampleRate: '50' } },
      'body.config.sampleRate: must be a number',
    ],
    [
      { destination: 'https://a.example', config: { propertyFilters: [{ key: 'env' }] } },
      'body.config.propertyFilters.0.value: must be a string',
    ],
    [{ destination: 'https://a.example', includeData: 'yes' }, 'body.includeData: must be a boolean'],
    [{ destination: 'https://a.example', secret: 'x' }, 'body: Unrecognized key: "secret"'],
  ])('refuse %j with 400 naming the field', async (payload, error) => {
    const org = await suite.tally.newOrg()
    const res = await call(org, 'POST', '/v1/webhooks', payload)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ data: null, error })
  })

  it("answer 404 Webhook not found for unknown ids and another organization's webhooks, which stay untouched", async () => {
    const [mine, theirs] = [await suite.tally.newOrg(), await suite.tally.newOrg()]
    const hook = await createWebhook(suite.tally, theirs, 'https://hooks.example.com')
    for (const id of [hook.id, randomUUID(), 'not-a-uuid']) {
      for (const [method, url] of [
        ['DELETE', `/v1/webhooks/${id}`],
        ['POST', `/v1/webhooks/${id}/test`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['POST', `/v1/webhooks/${id}/rotate-key`],
        ['POST', `/v1/webhooks/${id}/deliveries/${randomUUID()}/retry`],
      ] as const) {
        const res = await call(mine, method, url)
        expect(res.statusCode, `${method} ${url}`).toBe(404)
        expect(res.json()).toEqual({ data: null, error: 'Webhook not found' })
      }
    }
    expect((await call(mine, 'GET', '/v1/webhooks')).json().data).toEqual([])
    expect((await call(theirs, 'GET', '/v1/webhooks')).json().data.map((w: { id: string }) => w.id)).toEqual([
      hook.id,
    ])
    const retry = await call(theirs, 'POST', `/v1/webhooks/${hook.id}/deliveries/${randomUUID()}/retry`)
    expect(retry.json()).toEqual({ data: null, error: 'Delivery not found' })
    expect((await call(theirs, 'DELETE', `/v1/webhooks/${hook.id}`)).json()).toEqual({
      data: null,
      error: null,
    })
    expect((await call(theirs, 'DELETE', `/v1/webhooks/${hook.id}`)).json()).toEqual({
      data: null,
      error: 'Webhook not found',
    })
  })

  it('answer 404 to a test of a webhook deleted between its look-up and the read of its keys', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, 'https://hooks.example.com')
    const api = await apiWhoseKeyReadComesAfter(
      () => suite.tally.sql`delete from webhooks where id = ${hook.id}`,
    )
    try {
      const res = await api.app.inject({
        method: 'POST',
        url: `/v1/webhooks/${hook.id}/test`,
        headers: org.headers,
      })
      expect(api.interleaved()).toBe(true)
      expect(res.statusCode, res.body).toBe(404)
      expect(res.json()).toEqual({ data: null, error: 'Webhook not found' })
    } finally {
      await api.close()
    }
  })

  it('let any key of the organization create, rotate and delete, not only admin keys', async () => {
    const org = await suite.tally.newOrg()
    const member = await call(org, 'POST', '/v1/api-keys', { name: 'member', role: 'member' })
    expect(member.statusCode, member.body).toBe(201)
    const headers = { authorization: `Bearer ${member.json().data.api_key}` }
    const as = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
      suite.tally.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
    const created = await as('POST', '/v1/webhooks', { destination: 'https://hooks.example.com' })
    expect(created.statusCode, created.body).toBe(201)
    const { id } = created.json().data
    const rotated = await as('POST', `/v1/webhooks/${id}/rotate-key`)
    expect(rotated.statusCode, rotated.body).toBe(200)
    // A webhook made by a member is the organization's: the admin key sees it, and vice versa.
    expect((await call(org, 'GET', '/v1/webhooks')).json().data.map((w: { id: string }) => w.id)).toEqual([
      id,
    ])
    expect((await as('DELETE', `/v1/webhooks/${id}`)).json()).toEqual({ data: null, error: null })
    expect((await as('GET', '/v1/webhooks')).json().data).toEqual([])
  })
})

describe('outbound safety (private networks refused)', () => {
  it.each<[string, () => string, RegExp]>([
    ['loopback', () => `${suite.receiver.url}/x`, /^destination address 127\.0\.0\.1 is not public$/],
    [
      'IPv6 loopback',
      () => `https://[::1]:${new URL(suite.receiver.url).port}/x`,
      /^destination address ::1 is not public$/,
    ],
    [
      'IPv4-mapped loopback',
      () => `https://[::ffff:127.0.0.1]:${new URL(suite.receiver.url).port}/x`,
      /is not public$/,
    ],
    ['10.x', () => 'https://10.1.2.3/x', /^destination address 10\.1\.2\.3 is not public$/],
    [
      'cloud metadata',
      () => 'https://169.254.169.254/latest/meta-data',
      /^destination address 169\.254\.169\.254 is not public$/,
    ],
    [
      'a name resolving to loopback',
      () => `${suite.receiver.localhostUrl}/x`,
      /^localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/,
    ],
    ...(
      [
        ['NAT64 local-use (64:ff9b:1::/48)', '64:ff9b:1::7f00:1'],
        ['NAT64 well-known (64:ff9b::/96)', '64:ff9b::a9fe:a9fe'],
        ['6to4 of loopback (2002::/16)', '2002:7f00:1::1'],
        ['6to4 of a public address (2002::/16, the whole range)', '2002:808:808::1'],
        ['IPv4-compatible loopback (::/96)', '::7f00:1'],
        ['IPv4-translated (::ffff:0:0:0/96)', '::ffff:0:a00:1'],
        ['Teredo (2001::/32)', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
        ['IPv6 documentation (2001:db8::/32)', '2001:db8::1'],
        ['IPv6 documentation (3fff::/20)', '3fff::1'],
        ['discard-only (100::/64)', '100::1'],
        ['deprecated site-local (fec0::/10)', 'fec0::1'],
        ['segment routing (5f00::/16)', '5f00::1'],
      ] as const
    ).map(
      ([name, address]) =>
        [name, () => `https://[${address}]:${new URL(suite.receiver.url).port}/x`, /is not public$/] as [
          string,
          () => string,
          RegExp,
        ],
    ),
    ...(
      [
        ['TEST-NET-1 (192.0.2.0/24)', '192.0.2.10'],
        ['TEST-NET-2 (198.51.100.0/24)', '198.51.100.10'],
        ['TEST-NET-3 (203.0.113.0/24)', '203.0.113.10'],
        ['6to4 relay anycast (192.88.99.0/24)', '192.88.99.1'],
        ['AS112 (192.31.196.0/24)', '192.31.196.1'],
        ['AMT (192.52.193.0/24)', '192.52.193.1'],
        ['AS112 direct delegation (192.175.48.0/24)', '192.175.48.1'],
        ['limited broadcast', '255.255.255.255'],
      ] as const
    ).map(
      ([name, address]) =>
        [name, () => `https://${address}/x`, /is not public$/] as [string, () => string, RegExp],
    ),
  ])('refuse %s at creation, and at delivery without connecting', async (_name, destination, error) => {
    const org = await suite.tally.newOrg()
    // A literal private address or localhost is refused when the webhook is created…
    const created = await apiAs(suite.tally.app, org).post('/v1/webhooks', { destination: destination() })
    expect(created.status).toBe(400)
    expect(created.error).toMatch(
      /^body\.destination: must not point at (localhost|a private, loopback or metadata address)$/,
    )
    // …and one stored anyway (before that check, or a name that resolves privately later) at delivery.
    const hook = await storeWebhook(suite.tally, org, destination())
    const before = suite.receiver.received.length
    const res = await call(org, 'POST', `/v1/webhooks/${hook.id}/test`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data).toMatchObject({
      delivered: false,
      status: null,
      error: expect.stringMatching(error),
    })
    expect(suite.receiver.received.length).toBe(before)
  })

  it('record refused deliveries of events as failed attempts, due for a retry, never sent', async () => {
    const org = await suite.tally.newOrg()
    const hook = await storeWebhook(suite.tally, org, `${suite.receiver.localhostUrl}`)
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveriesOf(suite.tally, org, hook.id)
        return list[0]?.attempts === 1 && list
      },
      { what: 'the refused attempt to be recorded' },
    )
    expect(delivery).toMatchObject({ status: 'pending', last_response_status: null })
    expect(delivery?.last_error).toMatch(/not a public address/)
    expect(Date.parse(delivery?.next_attempt_at ?? '') - Date.now()).toBeGreaterThan(3_000) // 5 s first step
    expect(suite.receiver.to(hook.path)).toHaveLength(0)
  })
})

/**
 * A second API over a pool of its own, where `before` runs (and commits) just before the first
 * read of a webhook's signing keys: whatever it changes lands between a route's look-up of the
 * webhook and that read, every time.
 */
async function apiWhoseKeyReadComesAfter(before: () => PromiseLike<unknown>) {
  const { config } = suite.tally
  const pool = postgres(config.DATABASE_URL as string, {
    max: 2,
    onnotice: () => {},
    transform: { undefined: null },
  })
  let interleaved = false
  const sql = new Proxy(pool, {
    apply(target, self, args: unknown[]) {
      const [strings] = args
      if (!interleaved && Array.isArray(strings) && strings.join('').includes('select hmac_key')) {
        interleaved = true
        return Promise.resolve(before()).then(() => Reflect.apply(target, self, args))
      }
      return Reflect.apply(target, self, args)
    },
  }) as Sql
  const app = await secondApi(suite.tally, sql)
  return {
    app,
    interleaved: () => interleaved,
    async close() {
      await app.close()
      await pool.end()
    },
  }
}
