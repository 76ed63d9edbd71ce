import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { chatCompletion, requestApi } from './client.ts'

// Embedded mode (no KAFKA_BROKERS): intake hands events to the ingest handler in-process and
// answers 201 once they are in ClickHouse, so a query right after sees them.
describe('request pipeline, embedded mode', () => {
  let tally: TestTally
  let api: ReturnType<typeof requestApi>
  beforeAll(async () => {
    tally = await startTestTally({
      env: { TALLY_INTAKE_MAX_EVENTS: '20', TALLY_INTAKE_MAX_BYTES: String(64 * 1024) },
    })
    api = requestApi(tally)
  })
  afterAll(() => tally?.close())

  it('logs one event and answers 201 with its id; it is queryable at once with usage and cost', async () => {
    const org = await tally.newOrg()
    const res = await api.log(org, {
      created_at: '2026-11-01T10:00:00.000Z',
      latency_ms: 800,
      request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      response: chatCompletion('gpt-4o-mini-2024-07-18', 1000, 2000),
      user_id: 'u-1',
      properties: { env: 'prod' },
      session_id: 's-1',
      session_name: 'Checkout',
    })
    expect(res.status).toBe(201)
    const [id] = res.data.request_ids
    expect(id).toMatch(/^[0-9a-f-]{36}$/)

    const q = await api.query(org)
    expect(q.status).toBe(200)
    expect(q.data).toHaveLength(1)
    const r = q.data[0]
    expect(r).toMatchObject({
      request_id: id,
      created_at: '2026-11-01T10:00:00.000Z',
      completed_at: '2026-11-01T10:00:00.800Z',
      latency_ms: 800,
      model: 'gpt-4o-mini',
      provider: 'openai', // no target_url: from the model
      status: 200,
      prompt_tokens: 1000,
      completion_tokens: 2000,
      total_tokens: 3000,
      user_id: 'u-1',
      session_id: 's-1',
      session_name: 'Checkout',
      properties: { env: 'prod' },
    })
    // Properties as sent: the session is in its columns, not copied into Helicone's property names.
    expect(r.properties).toEqual({ env: 'prod' })
    // gpt-4o-mini: $0.15 per 1M input, $0.60 per 1M output (schemas/prices/models.json).
    expect(r.cost_usd).toBeCloseTo((1000 * 0.15 + 2000 * 0.6) / 1e6, 12)
    expect(r.request_body).toBeUndefined()

    const withBody = await api.query(org, { includeBody: true })
    expect(withBody.data[0].request_body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    })
    const one = await api.get(org, id)
    expect(one.status).toBe(200)
    expect(one.data.response_body.usage.total_tokens).toBe(3000)
  })

  it("keeps organizations apart: another org's id is a 404 like a missing one, and its query is empty", async () => {
    const a = await tally.newOrg()
    const b = await tally.newOrg()
    const { data } = await api.log(a, { model: 'gpt-4o', response: chatCompletion('gpt-4o') })
    const id = data.request_ids[0]
    const other = await api.get(b, id)
    const missing = await api.get(b, randomUUID())
    expect(other).toEqual({ status: 404, data: null, error: 'Request not found' })
    expect(missing).toEqual(other)
    expect((await api.query(b)).data).toEqual([])
  })

  it('takes a batch as an array or {events}, and prefers a given cost over the price table', async () => {
    const org = await tally.newOrg()
    const events = Array.from({ length: 5 }, (_, i) => ({
      model: 'gpt-4o',
      created_at: Date.UTC(2026, 10, 2, 0, 0, i),
      response: chatCompletion('gpt-4o', 100, 100),
      ...(i === 0 ? { cost_usd: 1.5 } : {}),
    }))
    expect((await api.log(org, events)).status).toBe(201)
    expect((await api.log(org, { events: events.slice(0, 2) })).status).toBe(201)
    expect(await api.count(org)).toBe(7)
    const q = await api.query(org, { sort: { created_at: 'asc' }, limit: 100 })
    const costs = q.data.map((r: { cost_usd: number }) => r.cost_usd)
    expect(costs.filter((c: number) => c === 1.5)).toHaveLength(2)
    expect(costs.filter((c: number) => c !== 1.5).every((c: number) => Math.abs(c - 0.00125) < 1e-12)).toBe(
      true,
    )
  })

  it('answers 413 in the envelope beyond the event and byte limits, and 400 naming the field', async () => {
    const org = await tally.newOrg()
    const many = Array.from({ length: 21 }, () => ({ model: 'm' }))
    expect(await api.log(org, many)).toEqual({
      status: 413,
      data: null,
      error: 'body.events: at most 20 events per request, got 21',
    })
    const big = await api.log(org, { model: 'm', request: { text: 'x'.repeat(70 * 1024) } })
    expect(big.status).toBe(413)
    expect(big.data).toBeNull()
    expect(big.error).toMatch(/^body: /)
    const bad = await api.log(org, [{ model: 'm' }, { request_id: 'nope' }])
    expect(bad.status).toBe(400)
    expect(bad.error).toBe('body.events.1.request_id: must be a UUID')
    expect(await api.count(org)).toBe(0)
  })

  it('replaces a re-sent request id, also when it comes with a different created_at, and never doubles', async () => {
    const org = await tally.newOrg()
    const id = randomUUID()
    const first = { request_id: id, created_at: '2026-11-03T08:00:00Z', model: 'gpt-4o', status: 500 }
    expect((await api.log(org, first)).status).toBe(201)
    expect((await api.log(org, first)).status).toBe(201)
    // A retry without created_at (it defaults to now), and one in another month.
    expect((await api.log(org, { request_id: id, model: 'gpt-4o', status: 502 })).status).toBe(201)
    const moved = { request_id: id, created_at: '2025-01-01T00:00:00Z', model: 'gpt-4o', status: 200 }
    expect((await api.log(org, moved)).status).toBe(201)
    // The same id twice in one batch.
    expect((await api.log(org, [moved, { ...moved, status: 201 }])).status).toBe(201)

    expect(await api.count(org)).toBe(1)
    const q = await api.query(org)
    expect(q.data).toHaveLength(1)
    expect(q.data[0]).toMatchObject({
      request_id: id,
      status: 201,
      created_at: '2026-11-03T08:00:00.000Z',
    })
    expect((await api.get(org, id)).data.status).toBe(201)
  })

  it('redelivery: the same events handed to the handlers twice leave every count unchanged', async () => {
    const org = await tally.newOrg()
    const events = Array.from({ length: 10 }, () =>
      sampleEvent({ organization_id: org.organizationId, cost_usd: 0.25 }),
    )
    await tally.publisher.publish(events)
    await tally.publisher.publish(events)
    expect(await api.count(org)).toBe(10)
    const q = await api.query(org, { limit: 100 })
    expect(q.data).toHaveLength(10)
    expect(q.data.reduce((s: number, r: { cost_usd: number }) => s + r.cost_usd, 0)).toBeCloseTo(2.5, 10)
  })

  it('ClickHouse down: the intake answers 503 (never a 201 for unwritten events); the retry lands once', async () => {
    const org = await tally.newOrg()
    const event = { request_id: randomUUID(), model: 'gpt-4o', created_at: '2026-11-08T00:00:00Z' }
    await tally.clickhouse.command({ query: 'DETACH TABLE request_response_rmt' })
    try {
      const res = await api.log(org, event)
      expect(res.status).toBe(503)
      // Raised on purpose, so it says what to do (a 500 would say only which request failed).
      expect(res.error).toBe('The events could not be recorded; retry with the same request ids')
      expect(res.data).toBeNull()
    } finally {
      await tally.clickhouse.command({ query: 'ATTACH TABLE request_response_rmt' })
    }
    expect((await api.log(org, event)).status).toBe(201)
    expect((await api.log(org, event)).status).toBe(201)
    expect(await api.count(org)).toBe(1)
  })

  it('filters, sorts and pages through POST /v1/request/query', async () => {
    const org = await tally.newOrg()
    const base = Date.UTC(2026, 10, 4)
    const events = [
      { model: 'gpt-4o', status: 200, latency_ms: 100, properties: { team: 'a' } },
      { model: 'gpt-4o', status: 500, latency_ms: 300, properties: { team: 'b' } },
      { model: 'claude-3-5-haiku', status: 200, latency_ms: 200, properties: { team: 'a' } },
      { model: 'gpt-4o-mini', status: 200, latency_ms: 400, properties: { team: 'b' }, cached: true },
    ].map((e, i) => ({ ...e, created_at: base + i * 1000 }))
    await api.log(org, events)
    const models = async (body: unknown) => {
      const res = await api.query(org, body)
      expect(res.status, JSON.stringify(res)).toBe(200)
      return res.data.map((r: { model: string }) => r.model)
    }
    expect(await models({ filter: 'all', sort: { created_at: 'asc' } })).toEqual([
      'gpt-4o',
      'gpt-4o',
      'claude-3-5-haiku',
      'gpt-4o-mini',
    ])
    expect(
      await models({
        filter: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
        sort: { latency: 'desc' },
      }),
    ).toEqual(['gpt-4o', 'gpt-4o'])
    expect(
      await models({
        filter: {
          left: { request_response_rmt: { properties: { team: { equals: 'a' } } } },
          operator: 'and',
          right: { request_response_rmt: { status: { equals: 200 } } },
        },
        sort: { created_at: 'asc' },
      }),
    ).toEqual(['gpt-4o', 'claude-3-5-haiku'])
    expect(
      await models({
        filter: {
          left: { request_response_rmt: { model: { contains: 'claude' } } },
          operator: 'or',
          right: { request_response_rmt: { cached: { equals: true } } },
        },
        sort: { created_at: 'asc' },
      }),
    ).toEqual(['claude-3-5-haiku', 'gpt-4o-mini'])
    expect(await models({ sort: { created_at: 'asc' }, offset: 1, limit: 2 })).toEqual([
      'gpt-4o',
      'claude-3-5-haiku',
    ])

    const badField = await api.query(org, { filter: { request_response_rmt: { nope: { equals: 1 } } } })
    expect(badField.status).toBe(400)
    expect(badField.error).toMatch(/^body\.filter\.request_response_rmt\.nope/)
    const badSort = await api.query(org, { sort: { secret: 'asc' } })
    expect(badSort.status).toBe(400)
    expect(badSort.error).toMatch(/^body\.sort/)
    expect((await api.query(org, { limit: 1001 })).error).toBe('body.limit: must be between 1 and 1000')
  })

  it('documents its routes in the OpenAPI document', async () => {
    const res = await tally.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    const paths = Object.keys(res.json().paths)
    for (const p of [
      '/v1/request/log',
      '/v1/request/query',
      '/v1/request/{id}',
      '/v1/models',
      '/custom/v1/log',
    ]) {
      expect(paths).toContain(p)
    }
  })

  it('lists the price table at GET /v1/models', async () => {
    const org = await tally.newOrg()
    const res = await callApi(tally.app, 'GET', '/v1/models', { as: org })
    expect(res.status).toBe(200)
    expect(res.data.unit).toBe('per 1M tokens')
    expect(res.data.models).toContainEqual({
      provider: 'openai',
      model: 'gpt-4o',
      input: 2.5,
      output: 10,
    })
  })

  it('exposes the pipeline counters at /metrics in Prometheus text', async () => {
    const org = await tally.newOrg()
    await api.log(org, { model: 'm' })
    const res = await tally.app.inject({ method: 'GET', url: '/metrics' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/plain/)
    const accepted = /^tally_events_accepted_total (\d+)$/m.exec(res.body)
    const written = /^tally_events_written_total (\d+)$/m.exec(res.body)
    expect(Number(accepted?.[1])).toBeGreaterThan(0)
    expect(Number(written?.[1])).toBeGreaterThan(0)
    expect(res.body).toMatch(/^tally_ingest_batch_duration_seconds_count \d+$/m)
  })
})
