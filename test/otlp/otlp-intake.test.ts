import { randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { create, fromBinary, toBinary } from '@bufbuild/protobuf'
import { describe, expect, it } from 'vitest'
import {
  ExportTraceServiceRequestSchema,
  ExportTraceServiceResponseSchema,
} from '../../generated/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'
import { apiAs, callApi } from '../support/api.ts'
import type { TestOrg } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook } from '../webhooks/support/api.ts'
import { webhookSuite } from '../webhooks/support/suite.ts'
import { jsonExport, jsonSpan, otelApp } from './client.ts'

const MAX_BYTES = 1_000_000
const suite = webhookSuite({
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  TALLY_INTAKE_MAX_BYTES: String(MAX_BYTES),
})

const bearer = (org: TestOrg) => ({ authorization: org.headers.authorization })

async function requestsOf(org: TestOrg, filter: unknown = {}) {
  const res = await apiAs(suite.tally.app, org).post('/v1/request/query', {
    filter,
    includeBody: true,
    limit: 100,
    sort: { created_at: 'asc' },
  })
  expect(res.status, res.error ?? '').toBe(200)
  // biome-ignore lint/suspicious/noExplicitAny: rows of the API as JSON
  return res.data as any[]
}

// Span times a minute back, in whole milliseconds from one base.
const BASE = Date.now() - 60_000
const at = (ms: number) => new Date(BASE + ms)

describe('OTLP intake with the OpenTelemetry JS SDK', () => {
  it('GenAI conventions over protobuf: model calls become requests with tokens, cost, session, tree and webhooks; agent and tool spans are skipped', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const app = otelApp({
      url: `${suite.tally.url}/v1/traces`,
      headers: bearer(org),
      encoding: 'protobuf',
      batch: true,
    })
    const agent = app.span(
      'invoke_agent planner',
      {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'openai',
        'gen_ai.conversation.id': 'conv-1',
        'gen_ai.usage.input_tokens': 999_999,
      },
      undefined,
      at(0),
    )
    const chat = app.span(
      'chat gpt-4o',
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 1000,
        'gen_ai.usage.output_tokens': 500,
        'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Be brief.' }]),
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Plan a trip' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: 'Go to Rome' }], finish_reason: 'stop' },
        ]),
        'gen_ai.response.finish_reasons': ['stop'],
        'user.id': 'alice',
        'tally.property.team': 'search',
      },
      agent,
      at(100),
    )
    const tool = app.span(
      'execute_tool weather',
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'weather',
      },
      chat,
      at(200),
    )
    tool.end(at(300))
    const nested = app.span(
      'chat claude-sonnet-4',
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4',
        'gen_ai.usage.input_tokens': 1300,
        'gen_ai.usage.output_tokens': 50,
        'gen_ai.usage.cache_read.input_tokens': 200,
        'gen_ai.usage.cache_creation.input_tokens': 100,
      },
      chat,
      at(400),
    )
    nested.end(at(900))
    chat.end(at(1600))
    agent.end(at(2000))
    await app.flush()
    await app.close()

    const rows = await requestsOf(org)
    expect(rows.map((r) => r.model)).toEqual(['gpt-4o', 'claude-sonnet-4'])
    const [first, second] = rows
    expect(first).toMatchObject({
      provider: 'openai',
      prompt_tokens: 1000,
      completion_tokens: 500,
      total_tokens: 1500,
      latency_ms: 1500,
      status: 200,
      user_id: 'alice',
      session_id: 'conv-1',
      trace_id: chat.spanContext().traceId,
      span_id: chat.spanContext().spanId,
      parent_span_id: agent.spanContext().spanId,
      created_at: at(100).toISOString(),
      completed_at: at(1600).toISOString(),
      request_body: {
        model: 'gpt-4o',
        system_instructions: [{ type: 'text', content: 'Be brief.' }],
        messages: [{ role: 'user', parts: [{ type: 'text', content: 'Plan a trip' }] }],
      },
      response_body: {
        model: 'gpt-4o-2024-08-06',
        finish_reasons: ['stop'],
        messages: [
          { role: 'assistant', parts: [{ type: 'text', content: 'Go to Rome' }], finish_reason: 'stop' },
        ],
      },
    })
    expect(first.properties).toMatchObject({
      team: 'search',
      'gen_ai.operation.name': 'chat',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
    })
    expect(first.properties['tally.missing']).toBeUndefined()
    expect(first.cost_usd).toBeCloseTo((1000 * 2.5 + 500 * 10) / 1e6, 12)
    // The nested call takes its session from the agent span in the same export.
    expect(second).toMatchObject({
      provider: 'anthropic',
      prompt_tokens: 1300,
      completion_tokens: 50,
      session_id: 'conv-1',
      parent_span_id: chat.spanContext().spanId,
    })
    expect(second.properties).toMatchObject({
      cache_read_input_tokens: '200',
      cache_creation_input_tokens: '100',
    })
    expect(second.cost_usd).toBeCloseTo((1300 * 3 + 50 * 15) / 1e6, 12)

    // The session query groups them; the session detail shows the tree.
    const now = Date.now()
    const sessions = await apiAs(suite.tally.app, org).post('/v1/session/query', {
      timeFilter: { startTimeUnixMs: now - 3_600_000, endTimeUnixMs: now + 60_000 },
      timezoneDifference: 0,
      filter: 'all',
    })
    expect(sessions.data).toEqual([
      expect.objectContaining({
        session_id: 'conv-1',
        total_requests: 2,
        prompt_tokens: 2300,
        completion_tokens: 550,
      }),
    ])
    const detail = await apiAs(suite.tally.app, org).get('/v1/session/conv-1')
    expect(detail.status, detail.error ?? '').toBe(200)
    expect(detail.data).toMatchObject({
      session_id: 'conv-1',
      total_requests: 2,
      total_tokens: 2850,
      truncated: false,
    })
    expect(detail.data.total_cost).toBeCloseTo(first.cost_usd + second.cost_usd, 12)
    expect(detail.data.requests).toMatchObject([
      { request_id: first.request_id, parent_request_id: null, depth: 0, latency_ms: 1500, model: 'gpt-4o' },
      { request_id: second.request_id, parent_request_id: first.request_id, depth: 1, latency_ms: 500 },
    ])

    // Webhooks fire for both, as for any other intake.
    const delivered = await waitFor(
      () => suite.receiver.to(hook.path).length === 2 && suite.receiver.to(hook.path),
      { what: 'two webhook deliveries' },
    )
    const ids = delivered.map((d) => JSON.parse(d.body.toString('utf8')).metadata.requestId).sort()
    expect(ids).toEqual([first.request_id, second.request_id].sort())

    // An exporter retrying the same spans replaces the rows: the request id comes from the span.
    const again = await fetch(`${suite.tally.url}/v1/traces`, {
      method: 'POST',
      headers: { ...bearer(org), 'content-type': 'application/json' },
      body: JSON.stringify(
        jsonExport([
          jsonSpan({
            traceId: chat.spanContext().traceId,
            spanId: chat.spanContext().spanId,
            attributes: {
              'gen_ai.request.model': 'gpt-4o',
              'gen_ai.usage.input_tokens': 1,
              'gen_ai.usage.output_tokens': 1,
            },
            startMs: at(100).getTime(),
          }),
        ]),
      ),
    })
    expect(again.status).toBe(200)
    const replaced = await requestsOf(org, {
      request_response_rmt: { request_id: { equals: first.request_id } },
    })
    expect(replaced).toHaveLength(1)
    expect(replaced[0].prompt_tokens).toBe(1)
  })

  it('OpenInference over OTLP/JSON with gzip: llm.* names, the span cost, session and user', async () => {
    const org = await suite.tally.newOrg()
    const app = otelApp({
      url: `${suite.tally.url}/v1/otel/v1/traces`,
      headers: { 'x-tally-api-key': org.apiKey },
      encoding: 'json',
      compression: 'gzip',
    })
    const chain = app.span('agent run', { 'openinference.span.kind': 'CHAIN', 'session.id': 'oi-1' })
    const llm = app.span(
      'ChatCompletion',
      {
        'openinference.span.kind': 'LLM',
        'llm.provider': 'openai',
        'llm.model_name': 'gpt-4o-mini',
        'llm.token_count.prompt': 100,
        'llm.token_count.completion': 20,
        'llm.token_count.total': 120,
        'llm.cost.total': 0.5,
        'session.id': 'oi-1',
        'user.id': 'bob',
        'input.mime_type': 'application/json',
        'input.value': JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        'output.value': 'hello there',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': 'hello there',
        metadata: JSON.stringify({ tenant: 'acme', retries: 2 }),
      },
      chain,
    )
    llm.end()
    chain.end()
    await app.flush()
    await app.close()

    const rows = await requestsOf(org)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      model: 'gpt-4o-mini',
      provider: 'openai',
      prompt_tokens: 100,
      completion_tokens: 20,
      cost_usd: 0.5,
      session_id: 'oi-1',
      user_id: 'bob',
      parent_span_id: chain.spanContext().spanId,
      request_body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      response_body: { model: 'gpt-4o-mini', messages: [{ role: 'assistant', content: 'hello there' }] },
    })
    expect(rows[0].properties).toMatchObject({ tenant: 'acme', retries: '2' })
  })

  it("older OpenLLMetry names at Helicone's async path /v1/trace/log, with Helicone headers", async () => {
    const org = await suite.tally.newOrg()
    const app = otelApp({
      url: `${suite.tally.url}/v1/trace/log`,
      headers: { ...bearer(org), 'Helicone-Property-App': 'mobile', 'Helicone-Session-Id': 'h-1' },
      encoding: 'json',
    })
    const workflow = app.span('plan.workflow', { 'traceloop.span.kind': 'workflow' })
    const call = app.span(
      'anthropic.chat',
      {
        'llm.request.type': 'chat',
        'gen_ai.system': 'Anthropic',
        'gen_ai.request.model': 'claude-3-5-haiku',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'hi',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'hello',
        'gen_ai.completion.0.finish_reason': 'end_turn',
        'gen_ai.usage.prompt_tokens': 10,
        'gen_ai.usage.completion_tokens': 5,
        'traceloop.association.properties.customer': 'acme',
      },
      workflow,
    )
    call.end()
    workflow.end()
    await app.flush()
    await app.close()

    const rows = await requestsOf(org)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      model: 'claude-3-5-haiku',
      provider: 'anthropic',
      prompt_tokens: 10,
      completion_tokens: 5,
      session_id: 'h-1',
      request_body: { model: 'claude-3-5-haiku', messages: [{ role: 'user', content: 'hi' }] },
      response_body: { messages: [{ role: 'assistant', content: 'hello', finish_reason: 'end_turn' }] },
    })
    expect(rows[0].properties).toMatchObject({
      App: 'mobile',
      customer: 'acme',
      'Helicone-Session-Id': 'h-1',
    })
    expect(rows[0].cost_usd).toBeCloseTo((10 * 0.8 + 5 * 4) / 1e6, 12)
  })

  it('stores a model call without model or tokens (gzip protobuf), names what was missing, and counts it in /metrics', async () => {
    const org = await suite.tally.newOrg()
    const before = await incompleteCount('model')
    const app = otelApp({
      url: `${suite.tally.url}/v1/traces`,
      headers: bearer(org),
      encoding: 'protobuf',
      compression: 'gzip',
    })
    app.span('chat', { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai' }).end()
    await app.flush()
    await app.close()
    const rows = await requestsOf(org)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ model: '', prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 })
    expect(rows[0].properties['tally.missing']).toBe('model,input_tokens,output_tokens')
    expect(await incompleteCount('model')).toBe(before + 1)
  })
})

async function incompleteCount(missing: string): Promise<number> {
  const text = await (await fetch(`${suite.tally.url}/metrics`)).text()
  const m = new RegExp(`^tally_otlp_spans_incomplete_total\\{missing="${missing}"\\} (\\d+)$`, 'm').exec(text)
  return m ? Number(m[1]) : 0
}

describe('GET /v1/session/{id}', () => {
  it('builds the tree from session_path where there are no span ids, and from given span ids of /v1/request/log', async () => {
    const org = await suite.tally.newOrg()
    const api = apiAs(suite.tally.app, org)
    const trace = randomBytes(16).toString('hex')
    const [root, child] = [randomBytes(8).toString('hex'), randomBytes(8).toString('hex')]
    const event = (ms: number, extra: Record<string, unknown>) => ({
      model: 'gpt-4o-mini',
      session_id: 'paths',
      created_at: at(ms).toISOString(),
      latency_ms: 10,
      prompt_tokens: 10,
      completion_tokens: 5,
      ...extra,
    })
    const logged = await api.post('/v1/request/log', [
      event(0, { session_path: '/' }),
      event(10, { session_path: '/plan' }),
      event(20, { session_path: '/plan/search/web' }),
      event(30, { session_path: '/other' }),
      event(40, { trace_id: trace, span_id: root }),
      event(50, { trace_id: trace.toUpperCase(), span_id: child, parent_span_id: root.toUpperCase() }),
    ])
    expect(logged.status, logged.error ?? '').toBe(201)
    const ids = logged.data.request_ids as string[]
    const detail = await api.get('/v1/session/paths')
    expect(detail.status, detail.error ?? '').toBe(200)
    expect(
      detail.data.requests.map((r: { parent_request_id: string | null; depth: number; span_id: string }) => [
        r.parent_request_id,
        r.depth,
      ]),
    ).toEqual([
      [null, 0],
      [ids[0], 1],
      [ids[1], 2], // /plan/search/web: the nearest stored prefix is /plan
      [ids[0], 1],
      [null, 0],
      [ids[4], 1],
    ])
    expect(detail.data.requests[5]).toMatchObject({ trace_id: trace, span_id: child, parent_span_id: root })
    expect(detail.data.total_cost).toBeCloseTo(6 * ((10 * 0.15 + 5 * 0.6) / 1e6), 12)

    const bad = await api.post('/v1/request/log', event(0, { trace_id: 'xyz', span_id: '0000000000000000' }))
    expect(bad.status).toBe(400)
    expect(bad.error).toMatch(
      /body\.events\.0\.(trace_id: must be 32 hexadecimal digits|span_id: must not be all zeros)/,
    )
  })
})

describe('OTLP answers to bad payloads', () => {
  const post = (
    org: TestOrg | undefined,
    body: Buffer | string,
    headers: Record<string, string>,
    path = '/v1/traces',
  ) =>
    fetch(`${suite.tally.url}${path}`, {
      method: 'POST',
      headers: { ...(org ? bearer(org) : {}), ...headers },
      body,
    })
  const envelopeOf = async (res: Response) => ({
    status: res.status,
    body: (await res.json()) as { data: null; error: string },
  })
  const protobuf = { 'content-type': 'application/x-protobuf' }
  const json = { 'content-type': 'application/json' }

  it('is in the OpenAPI document with both media types, its key headers and its statuses', async () => {
    const doc = (await (await fetch(`${suite.tally.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: Record<string, never> }>
    }
    for (const [path, id] of [
      ['/v1/traces', 'exportTraces'],
      ['/v1/otel/v1/traces', 'exportTracesOtel'],
      ['/v1/trace/log', 'exportTracesHelicone'],
    ]) {
      // biome-ignore lint/suspicious/noExplicitAny: an operation object as JSON
      const op = doc.paths[path as string]?.post as any
      expect(op.operationId).toBe(id)
      expect(Object.keys(op.requestBody.content).sort()).toEqual([
        'application/json',
        'application/x-protobuf',
      ])
      expect(Object.keys(op.responses['200'].content).sort()).toEqual([
        'application/json',
        'application/x-protobuf',
      ])
      expect(Object.keys(op.responses)).toEqual(
        expect.arrayContaining(['400', '401', '413', '415', '429', '503']),
      )
      expect(op.description).toContain('X-Tally-Api-Key')
    }
  })

  it('answers an empty export with an empty ExportTraceServiceResponse, in the request encoding', async () => {
    const org = await suite.tally.newOrg()
    const binary = await post(org, Buffer.alloc(0), protobuf)
    expect(binary.status).toBe(200)
    expect(binary.headers.get('content-type')).toBe('application/x-protobuf')
    expect(
      fromBinary(ExportTraceServiceResponseSchema, new Uint8Array(await binary.arrayBuffer())).partialSuccess,
    ).toBeUndefined()
    const text = await post(org, '{}', json)
    expect(text.status).toBe(200)
    expect(text.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await text.json()).toEqual({})
  })

  it('refuses what is not an authenticated OTLP export with a 4xx in the envelope, storing nothing', async () => {
    const org = await suite.tally.newOrg()
    const valid = Buffer.from(
      toBinary(ExportTraceServiceRequestSchema, create(ExportTraceServiceRequestSchema)),
    )
    const bomb = gzipSync(Buffer.alloc(50 * MAX_BYTES))
    expect(bomb.length).toBeLessThan(MAX_BYTES)
    const answers = [
      await envelopeOf(await post(undefined, valid, protobuf)),
      await envelopeOf(await post(org, Buffer.from('definitely not protobuf \u00ff\u00fe'), protobuf)),
      await envelopeOf(await post(org, 'hello', { 'content-type': 'text/plain' })),
      await envelopeOf(await post(org, Buffer.alloc(MAX_BYTES + 1, 1), protobuf)),
      await envelopeOf(await post(org, bomb, { ...protobuf, 'content-encoding': 'gzip' })),
      await envelopeOf(await post(org, Buffer.from('not gzip'), { ...protobuf, 'content-encoding': 'gzip' })),
      await envelopeOf(await post(org, valid, { ...protobuf, 'content-encoding': 'br' })),
      await envelopeOf(await post(org, '{"resourceSpans": [', json)),
      await envelopeOf(await post(org, '{"resourceSpans": {}}', json)),
      await envelopeOf(await post(org, Buffer.from([0x0a, 0x05, 0x12, 0x80]), protobuf)),
    ]
    answers.push(await envelopeOf(await post(org, valid, {})))
    expect(answers.map((a) => a.status)).toEqual([401, 400, 415, 413, 413, 400, 415, 400, 400, 400, 415])
    for (const a of answers) expect(a.body).toEqual({ data: null, error: expect.any(String) })
    expect(answers[1]?.body.error).toMatch(/^body: is not a protobuf ExportTraceServiceRequest/)
    expect(answers[2]?.body.error).toMatch(
      /^Content-Type: must be application\/x-protobuf or application\/json/,
    )
    expect(answers[4]?.body.error).toBe(`body: is larger than ${MAX_BYTES} bytes once decompressed`)
    expect(answers[8]?.body.error).toBe('body.resourceSpans: must be an array')
    expect(answers[9]?.body.error).toBe(
      'body: is not a protobuf ExportTraceServiceRequest (truncated or invalid protobuf: premature EOF)',
    )
    expect(answers[10]?.body.error).toBe(
      'Content-Type: is missing; must be application/x-protobuf or application/json (OTLP/HTTP)',
    )
    expect(await requestsOf(org)).toEqual([])
  })

  it('rejects a span whose protobuf text is not UTF-8 (proto3 strings must be) through partial_success', async () => {
    const org = await suite.tally.newOrg()
    const request = create(ExportTraceServiceRequestSchema, {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: randomBytes(16),
                  spanId: randomBytes(8),
                  attributes: [
                    {
                      key: 'gen_ai.request.model',
                      value: { value: { case: 'stringValue', value: 'gpt-4o-@@' } },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    })
    const bytes = Buffer.from(toBinary(ExportTraceServiceRequestSchema, request))
    const at = bytes.indexOf('@@')
    bytes[at] = 0xff
    bytes[at + 1] = 0xfe
    const res = await post(org, bytes, protobuf)
    expect(res.status).toBe(200)
    const partial = fromBinary(
      ExportTraceServiceResponseSchema,
      new Uint8Array(await res.arrayBuffer()),
    ).partialSuccess
    expect(partial?.rejectedSpans).toBe(1n)
    expect(partial?.errorMessage).toMatch(
      /^1 span\(s\) rejected: resourceSpans\.0\.scopeSpans\.0\.spans\.0: .*UTF-?8/i,
    )
    expect(await requestsOf(org)).toEqual([])
  })

  it('rejects spans with NUL text through partial_success and stores the others (JSON and protobuf)', async () => {
    const org = await suite.tally.newOrg()
    const good = {
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 1,
      'gen_ai.usage.output_tokens': 1,
    }
    const res = await post(
      org,
      JSON.stringify(
        jsonExport([
          jsonSpan({ attributes: good }),
          jsonSpan({ attributes: { ...good, 'tally.property.x': 'a\u0000b' } }),
          jsonSpan({ attributes: { ...good, 'gen_ai.usage.input_tokens': 2 ** 40 } }),
          jsonSpan({ attributes: { 'http.route': '/x' } }),
        ]),
      ),
      json,
    )
    expect(res.status).toBe(200)
    const answer = (await res.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } }
    expect(answer.partialSuccess.rejectedSpans).toBe('2')
    expect(answer.partialSuccess.errorMessage).toContain('spans.1.properties.x: must not contain NUL')
    expect(answer.partialSuccess.errorMessage).toContain(
      'spans.2 (input token count): must be at most 2147483647',
    )

    const request = create(ExportTraceServiceRequestSchema, {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                {
                  traceId: randomBytes(16),
                  spanId: randomBytes(8),
                  name: 'chat',
                  startTimeUnixNano: BigInt(Date.now() - 1000) * 1_000_000n,
                  endTimeUnixNano: BigInt(Date.now()) * 1_000_000n,
                  attributes: [
                    {
                      key: 'gen_ai.request.model',
                      value: { value: { case: 'stringValue', value: 'gpt\u0000-4o' } },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    })
    const binary = await post(org, Buffer.from(toBinary(ExportTraceServiceRequestSchema, request)), protobuf)
    expect(binary.status).toBe(200)
    const partial = fromBinary(
      ExportTraceServiceResponseSchema,
      new Uint8Array(await binary.arrayBuffer()),
    ).partialSuccess
    expect(partial?.rejectedSpans).toBe(1n)
    expect(partial?.errorMessage).toContain('model: must not contain NUL')

    const rows = await requestsOf(org)
    expect(rows).toHaveLength(1)
    expect(rows[0].model).toBe('gpt-4o')
  })

  it('bounds nesting: an attribute deeper than 32 levels rejects its span, and so does a message deeper than 200', async () => {
    const org = await suite.tally.newOrg()
    type Value = Parameters<typeof create<typeof ExportTraceServiceRequestSchema>>[1]
    const nested = (depth: number): unknown =>
      depth === 0
        ? { value: { case: 'stringValue', value: 'leaf' } }
        : { value: { case: 'kvlistValue', value: { values: [{ key: 'a', value: nested(depth - 1) }] } } }
    const exportWith = (depth: number) =>
      Buffer.from(
        toBinary(
          ExportTraceServiceRequestSchema,
          create(ExportTraceServiceRequestSchema, {
            resourceSpans: [
              {
                scopeSpans: [
                  {
                    spans: [
                      {
                        traceId: randomBytes(16),
                        spanId: randomBytes(8),
                        startTimeUnixNano: BigInt(Date.now() - 1000) * 1_000_000n,
                        endTimeUnixNano: BigInt(Date.now()) * 1_000_000n,
                        attributes: [
                          {
                            key: 'gen_ai.request.model',
                            value: { value: { case: 'stringValue', value: 'gpt-4o' } },
                          },
                          { key: 'gen_ai.input.messages', value: nested(depth) },
                        ],
                      },
                    ],
                  },
                ],
              },
            ],
          } as Value),
        ),
      )
    const deep = await post(org, exportWith(40), protobuf)
    expect(deep.status).toBe(200)
    const partial = fromBinary(
      ExportTraceServiceResponseSchema,
      new Uint8Array(await deep.arrayBuffer()),
    ).partialSuccess
    expect(partial?.rejectedSpans).toBe(1n)
    expect(partial?.errorMessage).toContain('attributes: is nested deeper than 32 levels')
    const deeper = await post(org, exportWith(120), protobuf)
    expect(deeper.status).toBe(200)
    const refused = fromBinary(
      ExportTraceServiceResponseSchema,
      new Uint8Array(await deeper.arrayBuffer()),
    ).partialSuccess
    expect(refused?.rejectedSpans).toBe(1n)
    expect(refused?.errorMessage).toMatch(/spans\.0: .*maximum recursion depth/)
    expect(await requestsOf(org)).toEqual([])
  })

  it("answers 404 for a session that does not exist or is another organization's (stored from a gzip body)", async () => {
    const owner = await suite.tally.newOrg()
    const other = await suite.tally.newOrg()
    // Sent gzip-encoded by hand: the exporters' own compression is not observable from here.
    const res = await post(
      owner,
      gzipSync(
        JSON.stringify(
          jsonExport([jsonSpan({ attributes: { 'gen_ai.request.model': 'gpt-4o', 'session.id': 'mine' } })]),
        ),
      ),
      { ...json, 'content-encoding': 'gzip' },
    )
    expect(res.status).toBe(200)
    expect((await apiAs(suite.tally.app, owner).get('/v1/session/mine')).status).toBe(200)
    const foreign = await apiAs(suite.tally.app, other).get('/v1/session/mine')
    expect(foreign).toEqual({ status: 404, data: null, error: 'Session not found' })
    expect((await apiAs(suite.tally.app, owner).get('/v1/session/nope')).status).toBe(404)
    expect((await callApi(suite.tally.app, 'GET', '/v1/session/mine')).status).toBe(401)
  })
})
