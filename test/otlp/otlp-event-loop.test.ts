import { randomBytes } from 'node:crypto'
import { create, toBinary } from '@bufbuild/protobuf'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExportTraceServiceRequestSchema } from '../../generated/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'
import { waitFor } from '../support/wait.ts'
import { jsonExport, jsonSpan } from './client.ts'

let tally: TestTally

beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally?.close())

const DEFAULT_MAX_SPANS = 10_000

/**
 * An export near the default limits (10,000 spans, ~9 MB): many small attributes per span, the
 * most objects the decoder builds per byte. The spans are not model calls, so the time between
 * the body's arrival and the answer is the decoding and mapping, with no intake behind it.
 */
function bigExport(spans = DEFAULT_MAX_SPANS): Buffer {
  const attributes = Array.from({ length: 30 }, (_, i) => ({
    key: `http.attr.${i}`,
    value: { value: { case: 'stringValue' as const, value: `value-${i}` } },
  }))
  return Buffer.from(
    toBinary(
      ExportTraceServiceRequestSchema,
      create(ExportTraceServiceRequestSchema, {
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: Array.from({ length: spans }, () => ({
                  traceId: randomBytes(16),
                  spanId: randomBytes(8),
                  name: 'GET /',
                  attributes,
                })),
              },
            ],
          },
        ],
      }),
    ),
  )
}

const postTraces = (org: TestOrg, body: Buffer | string, contentType = 'application/x-protobuf') =>
  fetch(`${tally.url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: org.headers.authorization, 'content-type': contentType },
    body,
  })

const decoding = (state: 'running' | 'waiting' | 'threads') =>
  metric('tally_otlp_exports_decoding', `{state="${state}"}`)

describe('OTLP decoding runs off the event loop', () => {
  it('answers /livez while a large export is being decoded', async () => {
    const org = await tally.newOrg()
    const body = bigExport()
    expect(body.length).toBeGreaterThan(5_000_000)
    const order: string[] = []
    const big = postTraces(org, body).then((res) => {
      order.push('otlp')
      return res
    })
    // The export is in a decoding thread: this process's own event loop is free to poll and answer.
    await waitFor(async () => (await decoding('running')) >= 1, { what: 'the export to be decoding' })
    const live = await fetch(`${tally.url}/livez`)
    order.push('livez')
    expect(live.status).toBe(200)
    expect((await big).status).toBe(200)
    expect(order).toEqual(['livez', 'otlp'])
  })

  it("decodes a second organization's export before the rest of a flooding organization's", async () => {
    const flooder = await tally.newOrg()
    const other = await tally.newOrg()
    const threads = await decoding('threads')
    expect(threads).toBeGreaterThanOrEqual(1)
    const body = bigExport()
    const order: string[] = []
    const flood = Array.from({ length: threads + 2 }, (_, i) =>
      postTraces(flooder, body).then((res) => {
        order.push(`flood-${i}`)
        return res.status
      }),
    )
    await waitFor(async () => (await decoding('running')) === threads && (await decoding('waiting')) === 2, {
      what: 'every thread busy with the flood, two more of its exports waiting',
    })
    const small = JSON.stringify(jsonExport([jsonSpan({ attributes: { 'gen_ai.request.model': 'gpt-4o' } })]))
    const answered = await postTraces(other, small, 'application/json')
    order.push('other')
    expect(answered.status).toBe(200)
    expect(await Promise.all(flood)).toEqual(flood.map(() => 200))
    // Its export took the first thread to come free: at most the running ones were answered before.
    expect(order.indexOf('other')).toBeLessThanOrEqual(threads)
    expect(order.slice(-1)[0]).not.toBe('other')
  })

  it('answers 413 for 10,001 spans before decoding any, naming the batch setting', async () => {
    const org = await tally.newOrg()
    const res = await postTraces(org, bigExport(DEFAULT_MAX_SPANS + 1))
    expect(res.status).toBe(413)
    expect(((await res.json()) as { error: string }).error).toContain('OTEL_BSP_MAX_EXPORT_BATCH_SIZE')
  })

  it("exports the event loop's delay (p99) in /metrics", async () => {
    const text = await (await fetch(`${tally.url}/metrics`)).text()
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m)
  })
})
