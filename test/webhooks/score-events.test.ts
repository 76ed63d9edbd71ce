import { createHmac, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { AnnotationEvent } from '../../services/shared/events/annotation-event.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { verifyWebhook } from '../../services/shared/webhooks/signature.ts'
import { apiAs } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import type { TestOrg } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook, deliveriesOf } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'

const suite = webhookSuite({
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  TALLY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
})

/** A score of a request (or of a session with `target_kind`); override what the test is about. */
function scoreEvent(org: TestOrg, over: Partial<AnnotationEvent> = {}): AnnotationEvent {
  return {
    organization_id: org.organizationId,
    kind: 'score',
    score_id: randomUUID(),
    target_kind: 'request',
    request_id: randomUUID(),
    session_id: '',
    name: 'helpfulness',
    data_type: 'numeric',
    value: 4,
    string_value: '',
    source: 'api',
    comment: 'clear answer',
    created_at: new Date('2026-11-20T09:31:12.500Z'),
    version: 1,
    deleted: false,
    ...over,
  }
}

/** A request event stored in ClickHouse, as a score's request is once ingested. */
async function storedRequest(org: TestOrg, over: Partial<RequestEvent> = {}): Promise<RequestEvent> {
  const event = sampleEvent({ organization_id: org.organizationId, ...over })
  await suite.tally.publisher.publish([event])
  await waitFor(
    async () => {
      const result = await suite.tally.clickhouse.query({
        query:
          'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID} AND request_id = {id:UUID}',
        query_params: { org: org.organizationId, id: event.request_id },
        format: 'JSONEachRow',
      })
      const [row] = (await result.json()) as { n: number | string }[]
      return Number(row?.n) > 0
    },
    { what: 'the request in ClickHouse' },
  )
  return event
}

const bodies = (path: string) => suite.receiver.to(path).map((r) => JSON.parse(r.body.toString('utf8')))

/** Deliveries recorded for a webhook, straight from Postgres (settled or not). */
async function recorded(webhookId: string): Promise<number> {
  const [row] = await suite.tally.sql<{ n: number }[]>`
    select count(*)::int as n from webhook_deliveries where webhook_id = ${webhookId}`
  return row?.n ?? 0
}

/**
 * Publishes a marker score the webhook at `path` takes, and waits for it: the events published
 * before it are recorded (sent or not).
 */
async function settle(org: TestOrg, path: string) {
  const marker = scoreEvent(org, { target_kind: 'session', request_id: '', session_id: 'marker' })
  await suite.tally.publisher.publish([marker])
  await waitFor(() => bodies(path).some((b) => b.score.id === marker.score_id), {
    what: 'the marker score',
  })
}

describe('webhook score events', () => {
  it('send no score event to a webhook that did not ask for one, and keep its GET as before', async () => {
    const org = await suite.tally.newOrg()
    const plain = await createWebhook(suite.tally, org, suite.receiver.url)
    expect(plain.config).toEqual({ sampleRate: 100, propertyFilters: [] })
    const scores = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created', 'feedback.created'] },
    })
    expect(scores.config).toEqual({
      events: ['score.created', 'feedback.created'],
      sampleRate: 100,
      propertyFilters: [],
    })
    const listed = await apiAs(suite.tally.app, org).get('/v1/webhooks')
    expect((listed.data as { id: string; config: unknown }[]).map((w) => [w.id, w.config])).toEqual([
      [plain.id, { sampleRate: 100, propertyFilters: [] }],
      [scores.id, { events: ['score.created', 'feedback.created'], sampleRate: 100, propertyFilters: [] }],
    ])

    await suite.tally.publisher.publish([scoreEvent(org), scoreEvent(org, { name: 'feedback' })])
    await settle(org, scores.path)
    await waitFor(() => bodies(scores.path).length === 3, { what: 'the three score deliveries' })
    expect(suite.receiver.to(plain.path)).toHaveLength(0)
    expect(await recorded(plain.id)).toBe(0)
  })

  it('deliver score.created with the request, its session, the value and the source, signed', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'] },
    })
    const request = await storedRequest(org, { session_id: 'ticket-5521' })
    const score = scoreEvent(org, { request_id: request.request_id })
    const categorical = scoreEvent(org, {
      request_id: request.request_id,
      name: 'tone',
      data_type: 'categorical',
      value: 0,
      string_value: 'friendly',
      source: 'eval',
      comment: '',
    })
    await suite.tally.publisher.publish([score, categorical])
    await waitFor(() => suite.receiver.to(hook.path).length === 2, { what: 'two deliveries' })
    const byScore = new Map(
      suite.receiver.to(hook.path).map((r) => [JSON.parse(r.body.toString()).score.id, r]),
    )
    const got = byScore.get(score.score_id)
    if (!got) throw new Error('no delivery of the score')
    expect(got.headers['x-service-signature']).toBe(
      createHmac('sha256', hook.hmac_key).update(got.body).digest('hex'),
    )
    expect(verifyWebhook({ body: got.body, headers: got.headers, hmacKey: hook.hmac_key })).toEqual({
      ok: true,
    })
    expect(JSON.parse(got.body.toString())).toEqual({
      version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      metadata: {
        event: 'score.created',
        organizationId: org.organizationId,
        requestId: request.request_id,
        sessionId: 'ticket-5521',
        timestamp: score.created_at.toISOString(),
      },
      score: {
        id: score.score_id,
        name: 'helpfulness',
        value: 4,
        data_type: 'numeric',
        source: 'api',
        comment: 'clear answer',
        version: score.version,
      },
    })
    expect(JSON.parse(byScore.get(categorical.score_id)?.body.toString() ?? '{}').score).toMatchObject({
      name: 'tone',
      value: 'friendly',
      data_type: 'categorical',
      source: 'eval',
    })

    // A request not stored (yet): no session; a session's score: its session, no request.
    const orphan = scoreEvent(org)
    const session = scoreEvent(org, { target_kind: 'session', request_id: '', session_id: 's-9' })
    await suite.tally.publisher.publish([orphan, session])
    await waitFor(() => suite.receiver.to(hook.path).length === 4, { what: 'four deliveries' })
    const metadata = new Map(bodies(hook.path).map((b) => [b.score.id, b.metadata]))
    expect(metadata.get(orphan.score_id)).toMatchObject({ requestId: orphan.request_id, sessionId: null })
    expect(metadata.get(session.score_id)).toMatchObject({ requestId: null, sessionId: 's-9' })

    const [delivery] = await deliveriesOf(suite.tally, org, hook.id, '?limit=1')
    expect(delivery).toMatchObject({ request_id: null, event: 'score.created' })
    expect((delivery as unknown as { event_key: string }).event_key).toMatch(/^score:[0-9a-f-]{36}:1$/)
  })

  it('deliver feedback.created for the score named feedback, its value a boolean; tombstones and properties deliver nothing', async () => {
    const org = await suite.tally.newOrg()
    const feedback = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['feedback.created'] },
    })
    const scores = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'] },
    })
    const liked = scoreEvent(org, { name: 'feedback', data_type: 'boolean', value: 1, comment: '' })
    const disliked = scoreEvent(org, { name: 'feedback', data_type: 'boolean', value: 0, comment: '' })
    const deleted = scoreEvent(org, { name: 'feedback', data_type: 'boolean', value: 1, deleted: true })
    const property = scoreEvent(org, { kind: 'property', score_id: '', name: 'env', string_value: 'prod' })
    await suite.tally.publisher.publish([liked, disliked, deleted, property])
    await waitFor(() => suite.receiver.to(feedback.path).length === 2, { what: 'two feedback deliveries' })
    const values = new Map(bodies(feedback.path).map((b) => [b.score.id, b]))
    expect(values.get(liked.score_id)?.metadata.event).toBe('feedback.created')
    expect(values.get(liked.score_id)?.score.value).toBe(true)
    expect(values.get(disliked.score_id)?.score.value).toBe(false)
    expect(values.has(deleted.score_id)).toBe(false)

    await settle(org, scores.path)
    // The feedback went to the feedback webhook only; the score webhook got the marker alone.
    expect(await recorded(scores.id)).toBe(1)
    expect(await recorded(feedback.id)).toBe(2)
  })

  it('sample by score id: sampleRate 0 records and sends none', async () => {
    const org = await suite.tally.newOrg()
    const none = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'], sampleRate: 0 },
    })
    const all = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'] },
    })
    await suite.tally.publisher.publish(Array.from({ length: 20 }, () => scoreEvent(org)))
    await settle(org, all.path)
    await waitFor(() => bodies(all.path).length === 21, { what: 'the 21 deliveries at 100%' })
    expect(await recorded(none.id)).toBe(0)
    expect(suite.receiver.to(none.path)).toHaveLength(0)
  })

  it("decide propertyFilters and filter trees on the scored request; a session's score or a request not stored never matches them", async () => {
    const org = await suite.tally.newOrg()
    const prod = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'], propertyFilters: [{ key: 'env', value: 'prod' }] },
    })
    const gpt4o = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: {
        events: ['score.created'],
        filter: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
      },
    })
    const unfiltered = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'] },
    })
    const prodRequest = await storedRequest(org, { properties: { env: 'prod' }, model: 'gpt-4o-mini' })
    const devRequest = await storedRequest(org, { properties: { env: 'dev' }, model: 'gpt-4o' })
    const onProd = scoreEvent(org, { request_id: prodRequest.request_id })
    const onDev = scoreEvent(org, { request_id: devRequest.request_id })
    const notStored = scoreEvent(org)
    const ofSession = scoreEvent(org, { target_kind: 'session', request_id: '', session_id: 'session-1' })
    await suite.tally.publisher.publish([onProd, onDev, notStored, ofSession])
    await waitFor(() => suite.receiver.to(unfiltered.path).length === 4, {
      what: 'the unfiltered deliveries',
    })
    await settle(org, unfiltered.path)
    expect(await recorded(prod.id)).toBe(1)
    expect(await recorded(gpt4o.id)).toBe(1)
    await waitFor(() => bodies(prod.path).length === 1 && bodies(gpt4o.path).length === 1, {
      what: 'the filtered deliveries',
    })
    expect(bodies(prod.path).map((b) => b.score.id)).toEqual([onProd.score_id])
    expect(bodies(gpt4o.path).map((b) => b.score.id)).toEqual([onDev.score_id])
  })

  it('deliver a redelivered score event once, and a later version of the score again', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created'] },
    })
    const first = scoreEvent(org, { value: 2 })
    await suite.tally.publisher.publish([first])
    await suite.tally.publisher.publish([first]) // redelivered by Kafka: the same version
    await waitFor(() => suite.receiver.to(hook.path).length === 1, { what: 'the first delivery' })
    await settle(org, hook.path)
    expect(bodies(hook.path).filter((b) => b.score.id === first.score_id)).toHaveLength(1)
    expect(await recorded(hook.id)).toBe(2) // the score and the marker

    const updated = { ...first, value: 5, version: 2 }
    await suite.tally.publisher.publish([updated, updated])
    await waitFor(() => bodies(hook.path).filter((b) => b.score.id === first.score_id).length === 2, {
      what: 'the update delivered',
    })
    await settle(org, hook.path)
    expect(await recorded(hook.id)).toBe(4) // two versions, two markers
    const ofScore = bodies(hook.path).filter((b) => b.score.id === first.score_id)
    expect(ofScore.map((b) => [b.metadata.event, b.score.value])).toEqual([
      ['score.created', 2],
      ['score.created', 5],
    ])
    const [row] = await suite.tally.sql<{ keys: string[] }[]>`
      select array_agg(event_key order by event_key) as keys from webhook_deliveries
      where webhook_id = ${hook.id} and event_key like ${`score:${first.score_id}:%`}`
    expect(row?.keys).toEqual([`score:${first.score_id}:1`, `score:${first.score_id}:2`])
  })

  it('refuse bad config.events with a 400 naming the field', async () => {
    const org = await suite.tally.newOrg()
    const api = apiAs(suite.tally.app, org)
    const create = (events: unknown) =>
      api.post('/v1/webhooks', { destination: `${suite.receiver.url}/x`, config: { events } })
    for (const [events, message] of [
      [
        ['score.deleted'],
        /^body\.config\.events(\.0)?: must be one of request\.completed, score\.created, feedback\.created/,
      ],
      [[], /^body\.config\.events: must not be empty/],
      [['score.created', 'score.created'], /^body\.config\.events: must not name an event twice/],
      ['score.created', /^body\.config\.events: must be an array of event names/],
    ] as const) {
      const res = await create(events)
      expect(res.status, JSON.stringify(events)).toBe(400)
      expect(res.error).toMatch(message)
    }
  })
})
