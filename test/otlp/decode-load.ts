import { randomBytes } from 'node:crypto'
import { create, toBinary } from '@bufbuild/protobuf'
import { ExportTraceServiceRequestSchema } from '../../generated/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'
import type { TestOrg } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'

export const DEFAULT_MAX_SPANS = 10_000

/**
 * An export near the default limits (10,000 spans, ~9 MB): many small attributes per span, the
 * most objects the decoder builds per byte. The spans are not model calls, so the time between
 * the body's arrival and the answer is the decoding and mapping, with no intake behind it.
 */
export function bigExport(spans = DEFAULT_MAX_SPANS): Buffer {
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

/** POST /v1/traces to the Tally at `url` as `org`. */
export const postTraces = (
  url: string,
  org: TestOrg,
  body: Buffer | string,
  contentType = 'application/x-protobuf',
) =>
  fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: { authorization: org.headers.authorization, 'content-type': contentType },
    body,
  })

/** The decoding pool's gauge in this process. */
export const decoding = (state: 'running' | 'waiting' | 'threads') =>
  metric('tally_otlp_exports_decoding', `{state="${state}"}`)
