import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sampleEvent } from '../support/events.ts'
import type { TestOrg } from '../support/harness.ts'
import { createWebhook, deliveriesOf } from './support/api.ts'
import { until } from './support/receiver.ts'
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
      'body.destination: must be an https:// URL without credentials',
    ],
    [
      { destination: 'https://user:pw@hooks.example.com' },
      'body.destination: must be an https:// URL without credentials',
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

  it('let only admin keys create, delete and rotate', async () => {
    const org = await suite.tally.newOrg()
    const member = await call(org, 'POST', '/v1/api-keys', { name: 'member', role: 'member' })
    const headers = { authorization: `Bearer ${member.json().data.api_key}` }
    const res = await suite.tally.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers,
      payload: { destination: 'https://hooks.example.com' },
    })
    expect(res.statusCode).toBe(403)
    expect((await suite.tally.app.inject({ method: 'GET', url: '/v1/webhooks', headers })).statusCode).toBe(
      200,
    )
  })
})

describe('outbound safety (private networks refused)', () => {
  it.each([
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
  ])('refuse %s without connecting', async (_name, destination, error) => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, destination())
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
    const hook = await createWebhook(suite.tally, org, `${suite.receiver.localhostUrl}`)
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    const [delivery] = await until(async () => {
      const list = await deliveriesOf(suite.tally, org, hook.id)
      return list[0]?.attempts === 1 && list
    }, 'the refused attempt to be recorded')
    expect(delivery).toMatchObject({ status: 'pending', last_response_status: null })
    expect(delivery?.last_error).toMatch(/not a public address/)
    expect(Date.parse(delivery?.next_attempt_at ?? '') - Date.now()).toBeGreaterThan(3_000) // 5 s first step
    expect(suite.receiver.to(hook.path)).toHaveLength(0)
  })
})
