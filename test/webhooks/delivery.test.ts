import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { isSampled } from '../../services/shared/webhooks/payload.ts'
import { verifyWebhook } from '../../services/shared/webhooks/signature.ts'
import { apiAs } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook, deliveriesOf, postWebhookAction } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'

const suite = webhookSuite({
  // The receiver is on 127.0.0.1: private networks are allowed here; api-and-ssrf.test.ts keeps them off.
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  TALLY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
})

describe('webhook deliveries', () => {
  it('deliver the spec 6.1 payload, signed over the exact raw bytes with both signature schemes', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const event = sampleEvent({ organization_id: org.organizationId, properties: { env: 'prod', team: 'a' } })
    await suite.tally.publisher.publish([event])
    const [got] = await waitFor(
      () => suite.receiver.to(hook.path).length === 1 && suite.receiver.to(hook.path),
      { what: 'the delivery' },
    )
    if (!got) throw new Error('no delivery')

    expect(got.headers['content-type']).toBe('application/json')
    expect(got.headers['x-service-signature']).toBe(
      createHmac('sha256', hook.hmac_key).update(got.body).digest('hex'),
    )
    expect(verifyWebhook({ body: got.body, headers: got.headers, hmacKey: hook.hmac_key })).toEqual({
      ok: true,
    })
    // One flipped byte breaks both signatures.
    const tampered = Buffer.from(got.body)
    tampered[10] = (tampered[10] as number) ^ 1
    expect(verifyWebhook({ body: tampered, headers: got.headers, hmacKey: hook.hmac_key }).ok).toBe(false)
    // An old timestamp is a replay.
    expect(
      verifyWebhook({
        body: got.body,
        headers: got.headers,
        hmacKey: hook.hmac_key,
        now: Date.now() + 600_000,
      }),
    ).toEqual({ ok: false, reason: 'webhook-timestamp is outside the tolerance' })

    const payload = JSON.parse(got.body.toString('utf8'))
    expect(payload).toEqual({
      version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      metadata: {
        requestId: event.request_id,
        organizationId: org.organizationId,
        timestamp: event.completed_at.toISOString(),
        event: 'request.completed',
      },
      request: JSON.parse(event.request_body),
      response: JSON.parse(event.response_body),
      metrics: {
        latency_ms: event.latency_ms,
        cost_usd: event.cost_usd,
        cached: false,
        prompt_tokens: event.prompt_tokens,
        completion_tokens: event.completion_tokens,
        total_tokens: event.total_tokens,
      },
      properties: { env: 'prod', team: 'a' },
    })
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveriesOf(suite.tally, org, hook.id)
        return list[0]?.status === 'delivered' && list
      },
      { what: 'the delivery to be recorded as delivered' },
    )
    expect(delivery).toMatchObject({ request_id: event.request_id, attempts: 1, last_response_status: 200 })
    expect(got.headers['webhook-id']).toBe(delivery?.id)
  })

  it('send every event at sampleRate 100, none at 0, and at 30 the same deterministic third each time', async () => {
    const org = await suite.tally.newOrg()
    const all = await createWebhook(suite.tally, org, suite.receiver.url, { config: { sampleRate: 100 } })
    const none = await createWebhook(suite.tally, org, suite.receiver.url, { config: { sampleRate: 0 } })
    const some = await createWebhook(suite.tally, org, suite.receiver.url, { config: { sampleRate: 30 } })
    const events = Array.from({ length: 300 }, () => sampleEvent({ organization_id: org.organizationId }))
    await suite.tally.publisher.publish(events)
    await suite.tally.publisher.publish(events) // redelivered: the same answer, no second send

    const expected = events.filter((e) => isSampled(some.id, e.request_id, 30)).map((e) => e.request_id)
    expect(expected.length).toBeGreaterThan(60)
    expect(expected.length).toBeLessThan(120)
    await waitFor(() => suite.receiver.to(all.path).length === 300, {
      what: 'all 300 deliveries at 100%',
      timeoutMs: 20_000,
    })
    await waitFor(() => suite.receiver.to(some.path).length >= expected.length, {
      what: 'the sampled deliveries',
      timeoutMs: 20_000,
    })
    const requestIds = (path: string) =>
      suite.receiver.to(path).map((r) => JSON.parse(r.body.toString()).metadata.requestId as string)
    expect(requestIds(some.path).sort()).toEqual([...expected].sort())
    const [{ n }] = (await suite.tally.sql`
      select count(*)::int as n from webhook_deliveries where webhook_id = ${none.id}`) as unknown as [
      { n: number },
    ]
    expect(n).toBe(0)
    expect(suite.receiver.to(none.path)).toHaveLength(0)
    expect(suite.receiver.to(all.path)).toHaveLength(300)
  })

  it('send only events whose properties equal every filter, and leave out bodies when includeData is false', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: {
        propertyFilters: [
          { key: 'env', value: 'prod' },
          { key: 'team', value: 'search' },
        ],
      },
      includeData: false,
    })
    const match = sampleEvent({
      organization_id: org.organizationId,
      properties: { env: 'prod', team: 'search', x: '1' },
    })
    const misses = [
      sampleEvent({ organization_id: org.organizationId, properties: { env: 'prod' } }),
      sampleEvent({ organization_id: org.organizationId, properties: { env: 'Prod', team: 'search' } }),
      sampleEvent({ organization_id: org.organizationId, properties: {} }),
    ]
    await suite.tally.publisher.publish([...misses, match])
    const [got] = await waitFor(
      () => suite.receiver.to(hook.path).length > 0 && suite.receiver.to(hook.path),
      { what: 'the delivery' },
    )
    const payload = JSON.parse(got?.body.toString() ?? '{}')
    expect(payload.metadata.requestId).toBe(match.request_id)
    expect(Object.keys(payload).sort()).toEqual(['metadata', 'metrics', 'properties', 'version'])
    expect(payload.properties).toEqual({ env: 'prod', team: 'search', x: '1' })
    const rows = await suite.tally
      .sql`select request_id from webhook_deliveries where webhook_id = ${hook.id}`
    expect(rows.map((r) => r.request_id)).toEqual([match.request_id])
  })

  it('send only events a config.filter tree matches, with the request-query language and its checks', async () => {
    const org = await suite.tally.newOrg()
    const filter = {
      left: { request_response_rmt: { model: { ilike: 'gpt-4%' } } },
      operator: 'and',
      right: {
        left: { request_response_rmt: { cost: { gte: 0.5 } } },
        operator: 'or',
        right: { properties: { 'Helicone-Session-Id': { equals: 's-vip' } } },
      },
    }
    const hook = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { filter, propertyFilters: [{ key: 'env', value: 'prod' }] },
    })
    expect(hook.config).toEqual({ sampleRate: 100, propertyFilters: [{ key: 'env', value: 'prod' }], filter })
    const event = (over: Parameters<typeof sampleEvent>[0]) =>
      sampleEvent({ organization_id: org.organizationId, properties: { env: 'prod' }, ...over })
    const matches = [
      event({ model: 'GPT-4o', cost_usd: 0.75 }),
      event({ model: 'gpt-4o-mini', cost_usd: 0, session_id: 's-vip' }),
    ]
    const misses = [
      event({ model: 'claude', cost_usd: 2 }),
      event({ model: 'gpt-4o', cost_usd: 0.1, session_id: 's-other' }),
      event({ model: 'gpt-4o', cost_usd: 2, properties: { env: 'dev' } }),
    ]
    await suite.tally.publisher.publish([...misses, ...matches])
    const got = await waitFor(
      () => suite.receiver.to(hook.path).length === 2 && suite.receiver.to(hook.path),
      { what: 'the two matching deliveries' },
    )
    const ids = got.map((d) => JSON.parse(d.body.toString()).metadata.requestId).sort()
    expect(ids).toEqual(matches.map((e) => e.request_id).sort())
    // All five were dispatched in one batch: no delivery row was written for a miss.
    const rows = await suite.tally
      .sql`select request_id from webhook_deliveries where webhook_id = ${hook.id}`
    expect(rows).toHaveLength(2)

    const api = apiAs(suite.tally.app, org)
    const refuse = async (config: unknown, error: string) => {
      const res = await api.post('/v1/webhooks', { destination: `${suite.receiver.url}/x`, config })
      expect(res).toEqual({ status: 400, data: null, error })
    }
    await refuse(
      { filter: { sessions_request_response_rmt: { session_total_cost: { gt: 1 } } } },
      'body.config.filter.sessions_request_response_rmt: is only available in session queries',
    )
    await refuse(
      { filter: { request_response_rmt: { model: { gt: 'a' } } } },
      'body.config.filter.request_response_rmt.model.gt: unknown operator for a text field; use one of equals, not-equals, like, ilike, contains, not-contains',
    )
    await refuse(
      { filter: { request_response_rmt: { response_body: { contains: 'error' } } } },
      'body.config.filter.request_response_rmt.response_body.contains: a webhook filter cannot read the request or response body; filter on properties, model, status or cost',
    )
    await refuse(
      {
        filter: {
          left: { request_response_rmt: { model: { like: `${'x'.repeat(250)}%` } } },
          operator: 'or',
          right: { properties: { env: { ilike: `%${'y'.repeat(30)}` } } },
        },
      },
      "body.config.filter.right.properties.env.ilike: a webhook filter's like and ilike patterns hold more than 256 characters in all",
    )
    await refuse(
      {
        filter: {
          left: { request_response_rmt: { model: { contains: 'x'.repeat(4000) } } },
          operator: 'or',
          right: { properties: { env: { equals: 'y'.repeat(100) } } },
        },
      },
      "body.config.filter.right.properties.env.equals: a webhook filter's text values hold more than 4096 characters in all",
    )
    // 51 conditions, balanced so as to stay within the 32 levels.
    const balanced = (from: number, to: number): unknown =>
      to - from === 1
        ? { request_response_rmt: { status: { equals: from } } }
        : {
            left: balanced(from, Math.floor((from + to) / 2)),
            operator: 'or',
            right: balanced(Math.floor((from + to) / 2), to),
          }
    await refuse(
      { filter: balanced(0, 51) },
      expect.stringMatching(
        /^body\.config\.filter(\.right)+\.request_response_rmt\.status\.equals: a webhook filter holds at most 50 conditions$/,
      ) as unknown as string,
    )
    await refuse(
      { filter: 42 },
      'body.config.filter: must be "all", {}, a condition or a {left, operator, right} branch',
    )
    const nested = Array.from({ length: 40 }).reduce<unknown>(
      (inner) => ({ left: inner, operator: 'and', right: 'all' }),
      'all',
    )
    await refuse(
      { filter: nested },
      expect.stringMatching(
        /^body\.config\.filter(\.left)+: the filter nests deeper than 32 levels$/,
      ) as unknown as string,
    )
    const [{ n }] = (await suite.tally.sql`
      select count(*)::int as n from webhooks where organization_id = ${org.organizationId}`) as unknown as [
      { n: number },
    ]
    expect(n).toBe(1)
  })

  it("deliver an organization's events to its own webhooks only", async () => {
    const [a, b] = [await suite.tally.newOrg(), await suite.tally.newOrg()]
    const hookA = await createWebhook(suite.tally, a, suite.receiver.url)
    const hookB = await createWebhook(suite.tally, b, suite.receiver.url)
    const eventA = sampleEvent({ organization_id: a.organizationId })
    const eventB = sampleEvent({ organization_id: b.organizationId })
    await suite.tally.publisher.publish([eventA, eventB])
    const [gotA] = await waitFor(
      () => suite.receiver.to(hookA.path).length === 1 && suite.receiver.to(hookA.path),
      { what: 'A' },
    )
    const [gotB] = await waitFor(
      () => suite.receiver.to(hookB.path).length === 1 && suite.receiver.to(hookB.path),
      { what: 'B' },
    )
    expect(JSON.parse(gotA?.body.toString() ?? '{}').metadata.requestId).toBe(eventA.request_id)
    expect(JSON.parse(gotB?.body.toString() ?? '{}').metadata.requestId).toBe(eventB.request_id)
    const res = await suite.tally.app.inject({
      method: 'GET',
      url: `/v1/webhooks/${hookA.id}/deliveries`,
      headers: b.headers,
    })
    expect(res.json()).toEqual({ data: null, error: 'Webhook not found' })
  })

  it('never send twice when the same event is handed over again', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const event = sampleEvent({ organization_id: org.organizationId })
    await suite.tally.publisher.publish([event])
    await waitFor(async () => (await deliveriesOf(suite.tally, org, hook.id))[0]?.status === 'delivered', {
      what: 'delivered',
    })
    await suite.tally.publisher.publish([event])
    await suite.tally.publisher.publish([event, sampleEvent({ organization_id: org.organizationId })])
    await waitFor(() => suite.receiver.to(hook.path).length === 2, { what: 'the second, different event' })
    await waitFor(
      async () => (await deliveriesOf(suite.tally, org, hook.id)).every((d) => d.status === 'delivered'),
      { what: 'all delivered' },
    )
    const ids = suite.receiver.to(hook.path).map((r) => JSON.parse(r.body.toString()).metadata.requestId)
    expect(ids.filter((id) => id === event.request_id)).toHaveLength(1)
  })

  it('sign with both keys for a day after rotation; X-Service-Signature keeps the old one meanwhile', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const res = await postWebhookAction(suite.tally, org, hook.id, 'rotate-key')
    expect(res.statusCode, res.body).toBe(200)
    const { hmac_key: newKey, previous_key_expires_at } = res.json().data
    expect(newKey).not.toBe(hook.hmac_key)
    expect(Date.parse(previous_key_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3_600_000)

    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    const [got] = await waitFor(
      () => suite.receiver.to(hook.path).length === 1 && suite.receiver.to(hook.path),
      { what: 'the delivery' },
    )
    if (!got) throw new Error('no delivery')
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2)
    // A receiver that has not deployed the new key yet keeps verifying; one that has needs both keys.
    expect(verifyWebhook({ body: got.body, headers: got.headers, hmacKey: hook.hmac_key })).toEqual({
      ok: true,
    })
    expect(verifyWebhook({ body: got.body, headers: got.headers, hmacKey: newKey })).toEqual({
      ok: false,
      reason: 'X-Service-Signature does not match',
    })
    expect(verifyWebhook({ body: got.body, headers: got.headers, hmacKey: [hook.hmac_key, newKey] }).ok).toBe(
      true,
    )
    // The Standard Webhooks header carries the new key's signature too.
    const newKeyService = {
      ...got.headers,
      'x-service-signature': createHmac('sha256', newKey).update(got.body).digest('hex'),
    }
    expect(verifyWebhook({ body: got.body, headers: newKeyService, hmacKey: newKey })).toEqual({ ok: true })
  })

  it('refuse a second rotation while the previous key still signs, naming when the overlap ends', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const rotate = () => postWebhookAction(suite.tally, org, hook.id, 'rotate-key')
    const first = await rotate()
    expect(first.statusCode, first.body).toBe(200)
    const { hmac_key: newKey, previous_key_expires_at: endsAt } = first.json().data
    const second = await rotate()
    expect(second.statusCode).toBe(409)
    expect(second.json()).toEqual({
      data: null,
      error: `Key rotation refused: the previous key keeps signing until ${new Date(endsAt).toISOString()}; rotate again after that, once your receiver has the current key`,
    })
    // The refused rotation changed nothing: X-Service-Signature still uses the key the receiver has.
    const sent = await postWebhookAction(suite.tally, org, hook.id, 'test')
    expect(sent.json().data).toMatchObject({ delivered: true })
    const [got] = suite.receiver.to(hook.path)
    expect(got?.headers['x-service-signature']).toBe(
      createHmac('sha256', hook.hmac_key)
        .update(got?.body ?? '')
        .digest('hex'),
    )
    expect(verifyWebhook({ body: got?.body ?? '', headers: got?.headers ?? {}, hmacKey: newKey }).ok).toBe(
      false,
    )
    expect(String(got?.headers['webhook-signature']).split(' ')).toHaveLength(2)
  })

  it('stop signing with the previous key once the overlap ends, and allow the next rotation then', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const rotate = () => postWebhookAction(suite.tally, org, hook.id, 'rotate-key')
    const test = () => postWebhookAction(suite.tally, org, hook.id, 'test')
    const second = (await rotate()).json().data.hmac_key as string
    // 24 h pass.
    await suite.tally.sql`
      update webhooks set previous_key_expires_at = now() - interval '1 second' where id = ${hook.id}`
    expect((await test()).json().data).toMatchObject({ delivered: true })
    const [afterOverlap] = suite.receiver.to(hook.path)
    expect(String(afterOverlap?.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(
      verifyWebhook({
        body: afterOverlap?.body ?? '',
        headers: afterOverlap?.headers ?? {},
        hmacKey: second,
      }),
    ).toEqual({ ok: true })

    const next = await rotate()
    expect(next.statusCode, next.body).toBe(200)
    const third = next.json().data.hmac_key as string
    const [row] = await suite.tally.sql<{ previous_hmac_key: string }[]>`
      select previous_hmac_key from webhooks where id = ${hook.id}`
    expect(row?.previous_hmac_key).toBe(second) // the expired first key is gone
    expect((await test()).json().data).toMatchObject({ delivered: true })
    const got = suite.receiver.to(hook.path)[1]
    // The oldest active key is now the second one, which the receiver has had for a day.
    expect(verifyWebhook({ body: got?.body ?? '', headers: got?.headers ?? {}, hmacKey: second })).toEqual({
      ok: true,
    })
    expect(
      verifyWebhook({ body: got?.body ?? '', headers: got?.headers ?? {}, hmacKey: hook.hmac_key }).ok,
    ).toBe(false)
    expect(String(got?.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(
      verifyWebhook({
        body: got?.body ?? '',
        headers: {
          ...got?.headers,
          'x-service-signature': createHmac('sha256', third)
            .update(got?.body ?? '')
            .digest('hex'),
        },
        hmacKey: third,
      }),
    ).toEqual({ ok: true })
  })

  it('answer 404 Webhook not found, recording nothing, when the webhook is deleted during its test send', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    let deleted: Promise<{ statusCode: number }> | undefined
    // The receiver answers only once the webhook is deleted.
    suite.receiver.on(hook.path, () => {
      deleted = Promise.resolve(
        suite.tally.app.inject({ method: 'DELETE', url: `/v1/webhooks/${hook.id}`, headers: org.headers }),
      )
      return { after: deleted }
    })
    const res = await postWebhookAction(suite.tally, org, hook.id, 'test')
    expect((await deleted)?.statusCode).toBe(200)
    expect(suite.receiver.to(hook.path)).toHaveLength(1)
    expect(res.statusCode, res.body).toBe(404)
    expect(res.json()).toEqual({ data: null, error: 'Webhook not found' })
    const rows = await suite.tally.sql`select 1 from webhook_deliveries where webhook_id = ${hook.id}`
    expect(rows).toHaveLength(0)
  })

  it('report the outcome of a test event, and record it in the deliveries log', async () => {
    const org = await suite.tally.newOrg()
    const good = await createWebhook(suite.tally, org, suite.receiver.url)
    const bad = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(bad.path, () => ({ status: 500 }))
    const sent = await postWebhookAction(suite.tally, org, good.id, 'test')
    expect(sent.statusCode, sent.body).toBe(200)
    expect(sent.json().data).toMatchObject({ delivered: true, status: 200, error: null })
    const [got] = suite.receiver.to(good.path)
    expect(
      verifyWebhook({ body: got?.body ?? '', headers: got?.headers ?? {}, hmacKey: good.hmac_key }),
    ).toEqual({ ok: true })
    expect(JSON.parse(got?.body.toString() ?? '{}').metadata.event).toBe('webhook.test')

    const failed = await postWebhookAction(suite.tally, org, bad.id, 'test')
    expect(failed.json().data).toMatchObject({
      delivered: false,
      status: 500,
      error: 'receiver answered 500',
    })
    expect(await deliveriesOf(suite.tally, org, bad.id)).toMatchObject([
      { event: 'webhook.test', status: 'failed', attempts: 1 },
    ])
  })

  it('page through the deliveries log newest first', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const events = Array.from({ length: 12 }, () => sampleEvent({ organization_id: org.organizationId }))
    for (const event of events) await suite.tally.publisher.publish([event])
    const first = await deliveriesOf(suite.tally, org, hook.id)
    const second = await deliveriesOf(suite.tally, org, hook.id, '?offset=10&limit=10')
    expect(first).toHaveLength(10)
    expect(second).toHaveLength(2)
    expect([...first, ...second].map((d) => d.request_id)).toEqual(events.map((e) => e.request_id).reverse())
    const bad = await suite.tally.app.inject({
      method: 'GET',
      url: `/v1/webhooks/${hook.id}/deliveries?limit=500`,
      headers: org.headers,
    })
    expect(bad.json()).toEqual({ data: null, error: 'querystring.limit: must be between 1 and 100' })
  })
})
