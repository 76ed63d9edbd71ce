import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadPriceTable } from '../../services/api/requests/prices.ts'
import { createRequestRepo } from '../../services/api/requests/repo.ts'
import { createIntake } from '../../services/api/requests/service.ts'
import { createIngestHandler } from '../../services/ingest/handler.ts'
import { queryLimits } from '../../services/shared/clickhouse/query-limits.ts'
import {
  createDeletedOrganizations,
  type DeletedOrganizations,
} from '../../services/shared/deleted-organizations.ts'
import { coalesce } from '../../services/shared/events/coalesced-writer.ts'
import { loadEventCodec, loadRequestCodec } from '../../services/shared/events/codec.ts'
import { createInProcessPublisher } from '../../services/shared/events/transport.ts'
import { callApi } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'
import { requestApi } from './client.ts'

const log = pino({ level: 'silent' })
const DAY = 24 * 60 * 60 * 1000

describe('unbounded inputs are refused or clamped at the edge, and a bad row never blocks the others', () => {
  let tally: TestTally
  let api: ReturnType<typeof requestApi>
  let deletions: DeletedOrganizations
  beforeAll(async () => {
    tally = await startTestTally()
    api = requestApi(tally)
    deletions = await createDeletedOrganizations(tally.sql, log)
  })
  afterAll(async () => {
    await deletions?.close()
    await tally?.close()
  })

  it.each([
    [
      { created_at: 8e15 },
      'body.events.1.created_at: must be between 1970-01-01T00:00:00Z and 24 hours from now',
    ],
    [{ created_at: '9999-01-01T00:00:00Z' }, 'body.events.1.created_at: must be between'],
    [{ completed_at: Date.now() + 2 * DAY }, 'body.events.1.completed_at: must be between'],
    [{ created_at: '1969-12-31T23:59:59Z' }, 'body.events.1.created_at: must be between'],
    [{ prompt_tokens: 5e9 }, 'body.events.1.prompt_tokens: must be at most 2147483647'],
    [{ time_to_first_token_ms: 5e9 }, 'body.events.1.time_to_first_token_ms: must be at most 2147483647'],
  ])('refuses %j with a 400 naming the field, and stores nothing of the batch', async (bad, message) => {
    const org = await tally.newOrg()
    const res = await api.log(org, [{ model: 'gpt-4o' }, { model: 'gpt-4o', ...bad }])
    expect(res.status).toBe(400)
    expect(res.error).toContain(message)
    expect(await api.count(org)).toBe(0)
  })

  it.each([
    [1e20, 'body.events.0.prompt_tokens: must be at most 2147483647'],
    [-1e20, 'body.events.0.prompt_tokens: must be at least 0'],
    [1.5, 'body.events.0.prompt_tokens: must be a whole number'],
  ])('names the bound a whole number past 2^53 breaks (prompt_tokens: %d), once', async (tokens, message) => {
    const org = await tally.newOrg()
    const res = await api.log(org, { model: 'gpt-4o', prompt_tokens: tokens })
    expect({ status: res.status, error: res.error }).toEqual({ status: 400, error: message })
  })

  it('accepts a created_at up to a day ahead (clock skew)', async () => {
    const org = await tally.newOrg()
    const res = await api.log(org, { created_at: Date.now() + 12 * 60 * 60 * 1000, model: 'gpt-4o' })
    expect(res.status).toBe(201)
    expect(await api.count(org)).toBe(1)
  })

  it('clamps token counts read from a response body to int32, and counts the clamping', async () => {
    const org = await tally.newOrg()
    const before = await metric('tally_intake_values_clamped_total', '{field="prompt_tokens"}')
    const res = await api.log(org, {
      model: 'gpt-4o',
      response: { usage: { prompt_tokens: 5e9, completion_tokens: 7 } },
    })
    expect(res.status).toBe(201)
    const got = await api.get(org, res.data.request_ids[0])
    expect(got.data).toMatchObject({
      prompt_tokens: 2147483647,
      completion_tokens: 7,
      total_tokens: 2147483647,
    })
    expect(await metric('tally_intake_values_clamped_total', '{field="prompt_tokens"}')).toBe(before + 1)
  })

  const helicone = (timing: object, response: object = { choices: [] }) => ({
    providerRequest: {
      url: 'https://api.openai.com/v1/chat/completions',
      json: { model: 'gpt-4o' },
      meta: {},
    },
    providerResponse: { json: response, status: 200, headers: {} },
    timing,
  })

  it.each([
    [{ startTime: 8e15, endTime: Date.now() }, 'body.timing.startTime: must be between'],
    [{ startTime: { seconds: 8e12, milliseconds: 0 }, endTime: Date.now() }, 'body.timing.startTime'],
    [{ startTime: Date.now(), endTime: '2400-01-01T00:00:00Z' }, 'body.timing.endTime: must be between'],
    [
      { startTime: Date.now(), endTime: Date.now(), timeToFirstToken: 5e9 },
      'body.timing.timeToFirstToken: must be at most',
    ],
  ])('Helicone intake refuses timing %j with a 400 naming the field', async (timing, message) => {
    const org = await tally.newOrg()
    const res = await callApi(tally.app, 'POST', '/oai/v1/log', { as: org, body: helicone(timing) })
    expect(res.status).toBe(400)
    expect(res.error).toContain(message)
    expect(await api.count(org)).toBe(0)
  })

  it('Helicone intake clamps Anthropic usage that sums past int32', async () => {
    const org = await tally.newOrg()
    const res = await callApi(tally.app, 'POST', '/anthropic/v1/log', {
      as: org,
      body: helicone(
        { startTime: Date.now() - 1000, endTime: Date.now() },
        { usage: { input_tokens: 2e9, cache_read_input_tokens: 2e9, output_tokens: 5 } },
      ),
    })
    expect(res.status).toBe(201)
    const got = await api.get(org, res.data.request_id)
    expect(got.data).toMatchObject({ prompt_tokens: 2147483647, completion_tokens: 5 })
  })

  it('an event the codec cannot carry is a 400 naming its index, not a 503, and nothing is written', async () => {
    const org = await tally.newOrg()
    // Past the route's validation (called directly): the service is the last line of defence.
    const intake = createIntake({
      repo: createRequestRepo(tally.clickhouse, queryLimits(tally.config)),
      publisher: tally.publisher,
      prices: loadPriceTable(),
      log,
      lookupTimeoutMs: 1_000,
      countEvents: async () => {},
    })
    const err = await intake(org.organizationId, [
      { status: 200, cached: false, model: 'a' },
      { status: 200, cached: false, model: 'b', time_to_first_token_ms: 5e9 },
    ]).catch((e) => e)
    expect(err).toMatchObject({ status: 400 })
    expect(err.message).toMatch(/^body\.events\.1: cannot be encoded \(.*int/)
    expect(await api.count(org)).toBe(0)
  })

  it('in-process: a row ClickHouse refuses is isolated and named; the rest of the batch is written', async () => {
    const org = await tally.newOrg()
    const codec = await loadEventCodec()
    const publisher = createInProcessPublisher(codec, [
      createIngestHandler(tally.clickhouse, log, deletions, await loadRequestCodec()),
    ])
    const ev = (o = {}) => sampleEvent({ organization_id: org.organizationId, ...o })
    const batch = [ev(), ev(), ev({ created_at: new Date(8e15) }), ev(), ev()]
    const err = await publisher.publish(batch).catch((e) => e)
    expect(err?.events).toEqual([
      { index: 2, reason: expect.stringContaining('CANNOT_PARSE_DATETIME (code 41)') },
    ])
    expect(await api.count(org)).toBe(4)
  })

  it("coalesced writers: one caller's bad row goes back to that caller only; the other caller's rows are written", async () => {
    const a = await tally.newOrg()
    const b = await tally.newOrg()
    const writer = coalesce(createIngestHandler(tally.clickhouse, log, deletions, await loadRequestCodec()), {
      maxEvents: 100,
      maxBytes: 1 << 20,
    })
    const of = (org: { organizationId: string }, o = {}) =>
      sampleEvent({ organization_id: org.organizationId, ...o })
    const [fromA, fromB] = await Promise.all([
      writer.write([of(a), of(a), of(a)]),
      writer.write([of(b), of(b, { created_at: new Date(8e15) }), of(b)]),
    ])
    expect(fromA).toEqual([])
    expect(fromB).toEqual([{ index: 1, reason: expect.stringContaining('CANNOT_PARSE_DATETIME') }])
    expect(await api.count(a)).toBe(3)
    expect(await api.count(b)).toBe(2)
  })

  it('a transient failure (table detached) is retried by the caller, never isolated as bad rows', async () => {
    const org = await tally.newOrg()
    const writer = coalesce(createIngestHandler(tally.clickhouse, log, deletions, await loadRequestCodec()), {
      maxEvents: 100,
      maxBytes: 1 << 20,
    })
    const events = [sampleEvent({ organization_id: org.organizationId, request_id: randomUUID() })]
    await tally.clickhouse.command({ query: 'DETACH TABLE request_response_rmt' })
    try {
      await expect(writer.write(events)).rejects.toMatchObject({ code: '60' })
    } finally {
      await tally.clickhouse.command({ query: 'ATTACH TABLE request_response_rmt' })
    }
    await expect(writer.write(events)).resolves.toEqual([])
    expect(await api.count(org)).toBe(1)
  })
})
