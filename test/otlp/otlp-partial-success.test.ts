import { randomBytes } from 'node:crypto'
import { create, fromBinary, toBinary } from '@bufbuild/protobuf'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ExportTraceServiceRequestSchema,
  ExportTraceServiceResponseSchema,
} from '../../generated/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'
import { apiAs } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { jsonExport, jsonSpan } from './client.ts'

const MAX_SPANS = 5
let tally: TestTally

beforeAll(async () => {
  tally = await startTestTally({ env: { TALLY_OTLP_MAX_SPANS: String(MAX_SPANS) } })
})
afterAll(() => tally?.close())

const post = (org: TestOrg, body: Buffer | string, contentType: string) =>
  fetch(`${tally.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: org.headers.authorization, 'content-type': contentType },
    body,
  })

async function models(org: TestOrg): Promise<string[]> {
  const res = await apiAs(tally.app, org).post('/v1/request/query', {
    limit: 100,
    sort: { created_at: 'asc' },
  })
  expect(res.status, res.error ?? '').toBe(200)
  return (res.data as { model: string }[]).map((r) => r.model).sort()
}

const call = (model: string, extra: Record<string, string | number> = {}) =>
  jsonSpan({ attributes: { 'gen_ai.request.model': model, 'gen_ai.usage.input_tokens': 1, ...extra } })

interface JsonAnswer {
  partialSuccess?: { rejectedSpans: string; errorMessage: string }
}

describe('OTLP partial success: a span that cannot be decoded is rejected alone', () => {
  it('OTLP/JSON: an unpaired surrogate or a base64 id rejects its span; the others are stored', async () => {
    const org = await tally.newOrg()
    const body = jsonExport([
      call('good-1'),
      call('bad-surrogate', { 'tally.property.x': 'a\ud800b' }),
      { ...call('bad-id'), traceId: 'AAECAwQFBgcICQoLDA0ODw==' },
      call('good-2'),
    ])
    const res = await post(org, JSON.stringify(body), 'application/json')
    expect(res.status).toBe(200)
    const answer = (await res.json()) as JsonAnswer
    expect(answer.partialSuccess?.rejectedSpans).toBe('2')
    expect(answer.partialSuccess?.errorMessage).toMatch(
      /^2 span\(s\) rejected: resourceSpans\.0\.scopeSpans\.0\.spans\.1: .*invalid UTF8; resourceSpans\.0\.scopeSpans\.0\.spans\.2\.traceId: must be a hex string/,
    )
    expect(await models(org)).toEqual(['good-1', 'good-2'])
  })

  it('OTLP/JSON: a resource that cannot be decoded rejects its spans, not the next resource', async () => {
    const org = await tally.newOrg()
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: '\udc00' } }] },
          scopeSpans: [{ spans: [call('lost-1'), call('lost-2')] }],
        },
        ...jsonExport([call('kept')]).resourceSpans,
      ],
    }
    const res = await post(org, JSON.stringify(body), 'application/json')
    expect(res.status).toBe(200)
    const answer = (await res.json()) as JsonAnswer
    expect(answer.partialSuccess?.rejectedSpans).toBe('2')
    expect(answer.partialSuccess?.errorMessage).toContain('resourceSpans.0.resource: ')
    expect(await models(org)).toEqual(['kept'])
  })

  it('protobuf: a span with text that is not UTF-8 is rejected in a protobuf answer; the others are stored', async () => {
    const org = await tally.newOrg()
    const span = (model: string) => ({
      traceId: randomBytes(16),
      spanId: randomBytes(8),
      startTimeUnixNano: BigInt(Date.now() - 1000) * 1_000_000n,
      endTimeUnixNano: BigInt(Date.now()) * 1_000_000n,
      attributes: [
        { key: 'gen_ai.request.model', value: { value: { case: 'stringValue' as const, value: model } } },
      ],
    })
    const bytes = Buffer.from(
      toBinary(
        ExportTraceServiceRequestSchema,
        create(ExportTraceServiceRequestSchema, {
          resourceSpans: [{ scopeSpans: [{ spans: [span('good-a'), span('bad-@@'), span('good-b')] }] }],
        }),
      ),
    )
    const at = bytes.indexOf('@@')
    bytes[at] = 0xff
    bytes[at + 1] = 0xfe
    const res = await post(org, bytes, 'application/x-protobuf')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-protobuf')
    const partial = fromBinary(
      ExportTraceServiceResponseSchema,
      new Uint8Array(await res.arrayBuffer()),
    ).partialSuccess
    expect(partial?.rejectedSpans).toBe(1n)
    expect(partial?.errorMessage).toMatch(
      /^1 span\(s\) rejected: resourceSpans\.0\.scopeSpans\.0\.spans\.1: /,
    )
    expect(await models(org)).toEqual(['good-a', 'good-b'])
  })
})

describe('OTLP span cap (TALLY_OTLP_MAX_SPANS)', () => {
  it('answers 413 past the cap, naming the exporter setting to lower, in both encodings; stores nothing', async () => {
    const org = await tally.newOrg()
    const spans = Array.from({ length: MAX_SPANS + 1 }, (_, i) => call(`m-${i}`))
    const json = await post(org, JSON.stringify(jsonExport(spans)), 'application/json')
    const binary = await post(
      org,
      Buffer.from(
        toBinary(
          ExportTraceServiceRequestSchema,
          create(ExportTraceServiceRequestSchema, {
            resourceSpans: [
              {
                scopeSpans: [
                  { spans: spans.map(() => ({ traceId: randomBytes(16), spanId: randomBytes(8) })) },
                ],
              },
            ],
          }),
        ),
      ),
      'application/x-protobuf',
    )
    const message = `body: holds more than ${MAX_SPANS} spans, the most one export may carry (TALLY_OTLP_MAX_SPANS); lower the exporter's batch size (OpenTelemetry SDKs: OTEL_BSP_MAX_EXPORT_BATCH_SIZE; Collector: send_batch_max_size)`
    expect([json.status, await json.json()]).toEqual([413, { data: null, error: message }])
    expect([binary.status, await binary.json()]).toEqual([413, { data: null, error: message }])

    // Empty groups cost memory too: as many as spans at most.
    const empty = await post(
      org,
      Buffer.from(Array.from({ length: MAX_SPANS + 1 }, () => [0x0a, 0x00]).flat()),
      'application/x-protobuf',
    )
    expect([empty.status, await empty.json()]).toEqual([
      413,
      {
        data: null,
        error: `body: holds more than ${MAX_SPANS} resourceSpans and scopeSpans, as many as the spans one export may carry (TALLY_OTLP_MAX_SPANS)`,
      },
    ])

    const atCap = await post(org, JSON.stringify(jsonExport(spans.slice(0, MAX_SPANS))), 'application/json')
    expect(atCap.status).toBe(200)
    expect(await models(org)).toHaveLength(MAX_SPANS)
  })
})
