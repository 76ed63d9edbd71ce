import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sampleEvent } from '../support/events.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook, deliveriesOf } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'

const suite = webhookSuite({
  // The receiver is on 127.0.0.1: private networks are allowed here; api-and-ssrf.test.ts keeps them off.
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  TALLY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
})

/** Every attempt at the webhook's deliveries, oldest first. */
const attemptsOf = (webhookId: string) =>
  suite.tally.sql<{ error: string | null; response_status: number | null; duration_ms: number }[]>`
    select a.error, a.response_status, a.duration_ms from webhook_delivery_attempts a
    join webhook_deliveries d on d.id = a.delivery_id where d.webhook_id = ${webhookId} order by a.id`

describe('webhook retries and their end', () => {
  it('retry 500s on the schedule with the same id and bytes, then deliver; give up after the last step', async () => {
    const org = await suite.tally.newOrg()
    const flaky = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(flaky.path, (_r, nth) => (nth <= 2 ? { status: 500, body: 'boom' } : { status: 200 }))
    const down = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(down.path, () => ({ status: 503, body: 'x'.repeat(5_000) }))
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])

    const attempts = await waitFor(
      () => suite.receiver.to(flaky.path).length === 3 && suite.receiver.to(flaky.path),
      { what: '3 attempts' },
    )
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1)
    expect(new Set(attempts.map((a) => a.body.toString('base64'))).size).toBe(1)
    expect((attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(85) // 100 ms −10% jitter
    expect((attempts[2]?.at ?? 0) - (attempts[1]?.at ?? 0)).toBeGreaterThanOrEqual(175) // 200 ms −10%
    await waitFor(async () => (await deliveriesOf(suite.tally, org, flaky.id))[0]?.status === 'delivered', {
      what: 'delivered',
    })
    expect((await deliveriesOf(suite.tally, org, flaky.id))[0]).toMatchObject({
      attempts: 3,
      last_response_status: 200,
    })

    const failed = await waitFor(
      async () => {
        const [d] = await deliveriesOf(suite.tally, org, down.id)
        return d?.status === 'failed' && d
      },
      { what: 'the delivery to fail after the schedule' },
    )
    expect(failed).toMatchObject({ attempts: 3, last_response_status: 503, next_attempt_at: null })
    expect(failed.last_response_body).toHaveLength(2_048)
    expect(suite.receiver.to(down.path)).toHaveLength(3)
    const [{ n }] = (await suite.tally.sql`
      select count(*)::int as n from webhook_delivery_attempts where delivery_id = ${failed.id}`) as unknown as [
      { n: number },
    ]
    expect(n).toBe(3)
  })

  it('count an answer later than 5 s as failed and retry it', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(hook.path, (_r, nth) => (nth === 1 ? { delayMs: 6_000 } : { status: 204 }))
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    await waitFor(async () => (await deliveriesOf(suite.tally, org, hook.id))[0]?.status === 'delivered', {
      what: 'delivered',
      timeoutMs: 15_000,
    })
    const rows = await attemptsOf(hook.id)
    expect(rows.map((r) => [r.error, r.response_status])).toEqual([
      ['no answer within 5000 ms', null],
      [null, 204],
    ])
  }, 20_000)

  it('end an attempt whose answer trickles in after 5 s in all, and retry it', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    // Headers at once, then a byte every 300 ms: no idle gap ever reaches a per-phase timeout.
    suite.receiver.on(hook.path, (_r, nth) => (nth === 1 ? { trickleMs: 300 } : { status: 204 }))
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    await waitFor(async () => (await deliveriesOf(suite.tally, org, hook.id))[0]?.status === 'delivered', {
      what: 'delivered',
      timeoutMs: 15_000,
    })
    const rows = await attemptsOf(hook.id)
    expect(rows.map((r) => [r.error, r.response_status])).toEqual([
      ['no answer within 5000 ms', null],
      [null, 204],
    ])
    expect(rows[0]?.duration_ms).toBeGreaterThanOrEqual(4_900)
    expect(rows[0]?.duration_ms).toBeLessThan(5_500)
  }, 20_000)

  it('wait at least as long as Retry-After asks', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(hook.path, (_r, nth) =>
      nth === 1 ? { status: 429, headers: { 'retry-after': '1' } } : {},
    )
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    const [first, second] = await waitFor(
      () => suite.receiver.to(hook.path).length === 2 && suite.receiver.to(hook.path),
      { what: 'retry' },
    )
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_000)
  })

  it('disable a webhook whose receiver answers 410, and enable it again on a manual retry', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    let gone = true
    suite.receiver.on(hook.path, () => (gone ? { status: 410 } : { status: 200 }))
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    const [failed] = await waitFor(
      async () => {
        const list = await deliveriesOf(suite.tally, org, hook.id)
        return list[0]?.status === 'failed' && list
      },
      { what: 'the 410 to fail the delivery' },
    )
    expect(failed?.attempts).toBe(1)
    const listed = await waitFor(
      async () => {
        const res = await suite.tally.app.inject({ method: 'GET', url: '/v1/webhooks', headers: org.headers })
        return res.json().data[0]?.state === 'disabled' && res.json().data[0]
      },
      { what: 'the webhook to be disabled' },
    )
    expect(listed).toMatchObject({
      id: hook.id,
      disabled_reason: expect.stringMatching(/^receiver answered 410 Gone/),
    })

    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    expect(await deliveriesOf(suite.tally, org, hook.id)).toHaveLength(1)

    gone = false
    const retried = await suite.tally.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${hook.id}/deliveries/${failed?.id}/retry`,
      headers: org.headers,
    })
    expect(retried.statusCode, retried.body).toBe(200)
    await waitFor(async () => (await deliveriesOf(suite.tally, org, hook.id))[0]?.status === 'delivered', {
      what: 'redelivered',
    })
    expect(suite.receiver.to(hook.path)).toHaveLength(2)
    const after = await suite.tally.app.inject({ method: 'GET', url: '/v1/webhooks', headers: org.headers })
    expect(after.json().data[0].state).toBe('active')
  })

  it('stop deliveries of a deleted webhook, pending retries included', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const other = await createWebhook(suite.tally, org, suite.receiver.url)
    // The retry is put 30 s off, so it is certainly still pending when the webhook goes.
    suite.receiver.on(hook.path, () => ({ status: 503, headers: { 'retry-after': '30' } }))
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    await waitFor(
      async () => {
        const [d] = await deliveriesOf(suite.tally, org, hook.id)
        return d?.status === 'pending' && d.attempts === 1
      },
      { what: 'a retry to be pending' },
    )
    const res = await suite.tally.app.inject({
      method: 'DELETE',
      url: `/v1/webhooks/${hook.id}`,
      headers: org.headers,
    })
    expect(res.json()).toEqual({ data: null, error: null })
    const [{ n }] = (await suite.tally.sql`
      select count(*)::int as n from webhook_deliveries where webhook_id = ${hook.id}`) as unknown as [
      { n: number },
    ]
    expect(n).toBe(0)
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    await waitFor(() => suite.receiver.to(other.path).length === 2, {
      what: 'both deliveries to the remaining webhook',
    })
    expect(suite.receiver.to(hook.path)).toHaveLength(1)
  })

  it('follow no redirect', async () => {
    const org = await suite.tally.newOrg()
    const target = `/${randomUUID()}`
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(hook.path, () => ({
      status: 307,
      headers: { location: `${suite.receiver.url}${target}` },
    }))
    await suite.tally.publisher.publish([sampleEvent({ organization_id: org.organizationId })])
    const failed = await waitFor(
      async () => {
        const [d] = await deliveriesOf(suite.tally, org, hook.id)
        return d?.status === 'failed' && d
      },
      { what: 'the redirected delivery to fail' },
    )
    expect(failed).toMatchObject({ attempts: 3, last_response_status: 307 })
    expect(suite.receiver.to(target)).toHaveLength(0)
  })
})
