import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { create, fromBinary, fromJson, type JsonValue, toBinary, toJson } from '@bufbuild/protobuf'
import { AppError, badRequest } from '../../shared/errors.ts'
import {
  type ExportTraceServiceRequest,
  ExportTraceServiceRequestSchema,
  ExportTraceServiceResponseSchema,
} from './gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js'

// OTLP/HTTP (https://opentelemetry.io/docs/specs/otlp/#otlphttp): a body of one
// ExportTraceServiceRequest, binary protobuf or OTLP/JSON, optionally gzip-encoded. Decoded with the
// code generated from the vendored opentelemetry-proto files (npm run generate:otlp).

export type OtlpEncoding = 'protobuf' | 'json'

const unzip = promisify(gunzip)

const tooLarge = (limit: number) =>
  new AppError(413, 'payload_too_large', `body: is larger than ${limit} bytes once decompressed`)

/** The body without its Content-Encoding: gzip is inflated to at most `limit` bytes (413 beyond). */
export async function decodeContent(
  body: Buffer,
  encoding: string | undefined,
  limit: number,
): Promise<Buffer> {
  const coding = (encoding ?? 'identity').trim().toLowerCase()
  if (coding === 'identity' || coding === '') return body
  if (coding !== 'gzip')
    throw new AppError(
      415,
      'unsupported_encoding',
      `Content-Encoding: must be gzip or identity, got ${JSON.stringify(coding.slice(0, 40))}`,
    )
  try {
    // maxOutputLength stops inflating at the limit: a small bomb never grows past it in memory.
    return await unzip(body, { maxOutputLength: limit })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limit)
    throw badRequest('body: is not valid gzip data (Content-Encoding: gzip)')
  }
}

/**
 * Message nesting the decoder follows (the library's default is 100). A structured attribute
 * costs three messages a level (AnyValue, KeyValueList, KeyValue) below the five of the export
 * itself, so 200 lets the mapping's own bound (32 levels, services/api/otlp/attributes.ts) reject
 * a too-deep attribute as one span through partial_success; deeper still is a 400 for the request.
 */
const RECURSION_LIMIT = 200

const HEX = /^[0-9a-fA-F]*$/

/**
 * OTLP/JSON writes trace and span ids as hex, where proto3 JSON (which fromJson reads) expects
 * base64: they are rewritten in place before decoding. Anything else is left for fromJson to judge.
 */
function hexIdsToBase64(json: unknown): void {
  const convert = (holder: Record<string, unknown>, key: string, where: string) => {
    const id = holder[key]
    if (id === undefined || id === null || id === '') return
    if (typeof id !== 'string' || !HEX.test(id) || id.length % 2 !== 0)
      throw badRequest(`${where}.${key}: must be a hex string (OTLP/JSON ids are hex, not base64)`)
    holder[key] = Buffer.from(id, 'hex').toString('base64')
  }
  const list = (v: unknown): Record<string, unknown>[] =>
    Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : []
  if (typeof json !== 'object' || json === null) return
  list((json as Record<string, unknown>).resourceSpans).forEach((rs, r) => {
    list(rs.scopeSpans).forEach((ss, s) => {
      list(ss.spans).forEach((span, i) => {
        const where = `body.resourceSpans.${r}.scopeSpans.${s}.spans.${i}`
        for (const key of ['traceId', 'spanId', 'parentSpanId']) convert(span, key, where)
        list(span.links).forEach((link, l) => {
          for (const key of ['traceId', 'spanId']) convert(link, key, `${where}.links.${l}`)
        })
      })
    })
  })
}

/** One ExportTraceServiceRequest from the (decompressed) body; 400 naming what is wrong. */
export function decodeRequest(body: Buffer, encoding: OtlpEncoding): ExportTraceServiceRequest {
  if (encoding === 'protobuf') {
    try {
      return fromBinary(ExportTraceServiceRequestSchema, body, { recursionLimit: RECURSION_LIMIT })
    } catch (err) {
      throw badRequest(`body: is not a protobuf ExportTraceServiceRequest (${shortMessage(err)})`)
    }
  }
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch (err) {
    throw badRequest(`body: is not valid JSON (${shortMessage(err)})`)
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw badRequest('body: must be an OTLP/JSON ExportTraceServiceRequest object')
  hexIdsToBase64(json)
  try {
    return fromJson(ExportTraceServiceRequestSchema, json as JsonValue, {
      ignoreUnknownFields: true,
      recursionLimit: RECURSION_LIMIT,
    })
  } catch (err) {
    throw badRequest(`body: is not an OTLP/JSON ExportTraceServiceRequest (${shortMessage(err)})`)
  }
}

function shortMessage(err: unknown): string {
  const text = err instanceof RangeError ? 'nested too deeply' : String((err as Error)?.message ?? err)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/**
 * The ExportTraceServiceResponse: partial_success set only when spans were rejected (or a warning
 * is due), as the OTLP specification asks; in the request's own encoding.
 */
export function encodeResponse(
  encoding: OtlpEncoding,
  rejected: number,
  message: string,
): { contentType: string; body: Buffer | string } {
  const response = create(ExportTraceServiceResponseSchema, {
    ...(rejected > 0 || message
      ? { partialSuccess: { rejectedSpans: BigInt(rejected), errorMessage: message } }
      : {}),
  })
  return encoding === 'protobuf'
    ? {
        contentType: 'application/x-protobuf',
        body: Buffer.from(toBinary(ExportTraceServiceResponseSchema, response)),
      }
    : {
        contentType: 'application/json',
        body: JSON.stringify(toJson(ExportTraceServiceResponseSchema, response)),
      }
}
