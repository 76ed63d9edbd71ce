import { randomUUID } from 'node:crypto'
import { HeliconeManualLogger } from '@helicone/helpers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { chatCompletion, requestApi } from './client.ts'

// The real @helicone/helpers package, pointed at a listening Tally over HTTP.
describe("Helicone's manual logger against Tally", () => {
  let tally: TestTally
  let api: ReturnType<typeof requestApi>
  beforeAll(async () => {
    tally = await startTestTally()
    api = requestApi(tally)
  })
  afterAll(() => tally?.close())

  const logger = (apiKey: string) => new HeliconeManualLogger({ apiKey, loggingEndpoint: tally.url })

  it('logRequest lands as a row with its properties, session, user, request id, tokens and cost', async () => {
    const org = await tally.newOrg()
    const requestId = randomUUID()
    const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }
    const result = await logger(org.apiKey).logRequest(
      request,
      async (recorder) => {
        recorder.appendResults(chatCompletion('gpt-4o', 2000, 1000))
        return 'done'
      },
      {
        'Helicone-Property-Team': 'search',
        'Helicone-Session-Id': 'sess-42',
        'Helicone-Session-Name': 'Onboarding',
        'Helicone-Session-Path': '/step/1',
        'Helicone-User-Id': 'alice',
        'Helicone-Request-Id': requestId,
      },
    )
    expect(result).toBe('done')
    const q = await api.query(org, {
      filter: { request_response_rmt: { properties: { Team: { equals: 'search' } } } },
      includeBody: true,
    })
    expect(q.status).toBe(200)
    expect(q.data).toHaveLength(1)
    const r = q.data[0]
    expect(r).toMatchObject({
      request_id: requestId,
      model: 'gpt-4o',
      // The URL says nothing (custom-model-nopath): the model names the provider.
      provider: 'openai',
      target_url: 'custom-model-nopath',
      status: 200,
      user_id: 'alice',
      session_id: 'sess-42',
      session_name: 'Onboarding',
      session_path: '/step/1',
      prompt_tokens: 2000,
      completion_tokens: 1000,
      total_tokens: 3000,
      request_body: request,
    })
    expect(r.properties).toMatchObject({ Team: 'search', 'Helicone-Session-Id': 'sess-42' })
    expect(r.cost_usd).toBeCloseTo((2000 * 2.5 + 1000 * 10) / 1e6, 12)

    // And in the session query (services/api/sessions), grouped by the session id it carried.
    const now = Date.now()
    const sessions = await callApi(tally.app, 'POST', '/v1/session/query', {
      as: org,
      body: {
        timeFilter: { startTimeUnixMs: now - 3_600_000, endTimeUnixMs: now + 60_000 },
        timezoneDifference: 0,
        filter: 'all',
      },
    })
    expect(sessions.status, JSON.stringify(sessions)).toBe(200)
    expect(sessions.data).toHaveLength(1)
    expect(sessions.data[0]).toMatchObject({
      session_id: 'sess-42',
      session_name: 'Onboarding',
      total_requests: 1,
      total_tokens: 3000,
      user_ids: ['alice'],
    })
  })

  it('a streamed response through logBuilder keeps its text, usage and time to first token', async () => {
    const org = await tally.newOrg()
    const chunks = [
      { model: 'gpt-4o-mini', choices: [{ delta: { content: 'Hel' } }] },
      { model: 'gpt-4o-mini', choices: [{ delta: { content: 'lo' } }] },
      {
        model: 'gpt-4o-mini',
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
      },
    ]
    async function* stream() {
      for (const c of chunks) yield c
    }
    const builder = logger(org.apiKey).logBuilder(
      { model: 'gpt-4o-mini', stream: true },
      {
        'Helicone-Session-Id': 'stream-session',
      },
    )
    const readable = builder.toReadableStream(
      Object.assign(stream(), { tee: () => [], toReadableStream: () => null }) as never,
    )
    const reader = readable.getReader()
    while (!(await reader.read()).done) {}
    await builder.sendLog()
    const q = await api.query(org, { includeBody: true })
    expect(q.data).toHaveLength(1)
    expect(q.data[0]).toMatchObject({
      model: 'gpt-4o-mini',
      provider: 'openai',
      session_id: 'stream-session',
      prompt_tokens: 9,
      completion_tokens: 2,
      total_tokens: 11,
    })
    expect(q.data[0].time_to_first_token_ms).toBeGreaterThanOrEqual(0)
    expect(String(q.data[0].response_body)).toContain('"Hel"')
  })

  it('infers the provider where the URL says nothing: the model, its family, then the response shape', async () => {
    const org = await tally.newOrg()
    const l = logger(org.apiKey)
    const cases: [{ model: string }, unknown, string][] = [
      [{ model: 'claude-3-5-haiku-20241022' }, { type: 'message', id: 'msg_1', content: [] }, 'anthropic'],
      [{ model: 'gemini-9-ultra' }, {}, 'google'], // not priced: its family
      [{ model: 'openai/gpt-4o' }, {}, 'openai'], // a router's prefix
      [{ model: 'house-model' }, chatCompletion('house-model'), 'openai'], // the response's shape
      [{ model: 'house-model' }, { text: 'hi' }, 'custom'],
    ]
    for (const [request, response] of cases)
      await l.logRequest(request, async (r) => r.appendResults(response as never))
    const q = await api.query(org, { limit: 10, sort: { created_at: 'asc' } })
    expect(q.data.map((r: { model: string; provider: string }) => r.provider).sort()).toEqual(
      cases.map((c) => c[2]).sort(),
    )
  })

  it('the provider argument routes to /oai/v1/log and /anthropic/v1/log, which record the provider', async () => {
    const org = await tally.newOrg()
    const l = logger(org.apiKey)
    await l.logRequest(
      { model: 'gpt-4o' },
      async (r) => r.appendResults(chatCompletion('gpt-4o')),
      {},
      'OPENAI',
    )
    await l.logRequest(
      { model: 'claude-3-5-haiku-20241022' },
      async (r) => r.appendResults({ type: 'message', usage: { input_tokens: 1_000_000, output_tokens: 0 } }),
      {},
      'ANTHROPIC',
    )
    const q = await api.query(org, { sort: { model: 'asc' } })
    expect(q.data.map((r: { provider: string }) => r.provider)).toEqual(['anthropic', 'openai'])
    expect(q.data[0].cost_usd).toBeCloseTo(0.8, 10)
  })

  it('Tally-* headers work like Helicone-* ones; a malformed request id is a 400 naming the header', async () => {
    const org = await tally.newOrg()
    const body = {
      providerRequest: {
        url: 'https://api.openai.com/v1/chat/completions',
        json: { model: 'gpt-4o' },
        meta: {},
      },
      providerResponse: { json: chatCompletion('gpt-4o'), status: 200, headers: {} },
      timing: { startTime: '2026-11-06T09:00:00Z', endTime: Date.parse('2026-11-06T09:00:01.500Z') / 1000 },
    }
    // Over real HTTP: the property name keeps the caller's spelling from the raw headers.
    const res = await callApi(tally.url, 'POST', '/v1/trace/custom/log', {
      as: org,
      headers: { 'Tally-Property-Stage': 'beta', 'Tally-User-Id': 'bob' },
      body,
    })
    expect(res.status).toBe(201)
    const r = (await api.get(org, res.data.request_id)).data
    expect(r).toMatchObject({ user_id: 'bob', provider: 'openai', properties: { Stage: 'beta' } })
    expect(r.created_at).toBe('2026-11-06T09:00:00.000Z')
    expect(r.latency_ms).toBe(1500)

    const bad = await callApi(tally.app, 'POST', '/custom/v1/log', {
      as: org,
      headers: { 'Helicone-Request-Id': 'not-a-uuid' },
      body,
    })
    expect(bad).toEqual({
      status: 400,
      data: null,
      error: 'headers.helicone-request-id: must be a UUID',
    })
    const noKey = await callApi(tally.app, 'POST', '/custom/v1/log', { body })
    expect(noKey.status).toBe(401)
  })
})
