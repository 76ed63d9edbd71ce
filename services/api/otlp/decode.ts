import { fromBinary, fromJson, type JsonValue } from '@bufbuild/protobuf'
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire'
import {
  type Resource,
  ResourceSchema,
} from '../../../generated/otlp/opentelemetry/proto/resource/v1/resource_pb.js'
import { type Span, SpanSchema } from '../../../generated/otlp/opentelemetry/proto/trace/v1/trace_pb.js'
import { AppError, badRequest } from '../../shared/errors.ts'

// OTLP/HTTP (https://opentelemetry.io/docs/specs/otlp/#otlphttp): a body of one
// ExportTraceServiceRequest, binary protobuf or OTLP/JSON (inflated first by http.ts when gzip).
// Decoded in a worker thread (worker.ts) with the code generated from the vendored
// opentelemetry-proto files (npm run generate:otlp).

export type OtlpEncoding = 'protobuf' | 'json'

/**
 * Message nesting the decoder follows (the library's default is 100). A structured attribute
 * costs three messages a level (AnyValue, KeyValueList, KeyValue) below the span, so 200 lets the
 * mapping's own bound (32 levels, services/api/otlp/attributes.ts) reject a too-deep attribute
 * with its own reason; deeper still is a span rejected by the decoder.
 */
const RECURSION_LIMIT = 200

const HEX = /^[0-9a-fA-F]*$/

/** One decoded span and its place in the body (`resourceSpans.0.scopeSpans.1.spans.2`). */
interface SpanAt {
  span: Span
  where: string
}

/** A resource and those of its spans that decoded. */
interface ResourceAt {
  resource: Resource | undefined
  spans: SpanAt[]
}

/**
 * An ExportTraceServiceRequest decoded span by span: a span that cannot be decoded (text that is
 * not Unicode, an id that is not hex, a nesting past the limit) is rejected alone, as OTLP's
 * partial success asks, and the others are kept.
 */
export interface DecodedExport {
  resources: ResourceAt[]
  /** "where: why" of each span the decoder rejected, in body order. */
  rejected: string[]
}

/**
 * Counts what an export holds while its frame is walked, and stops the walk as soon as there is
 * more than one export may carry: more spans (the exporter's batch must shrink), or more
 * resourceSpans and scopeSpans, which cost memory as spans do even when empty.
 */
function frameCounter(max: number) {
  let spans = 0
  let groups = 0
  return {
    span() {
      if (++spans > max)
        throw new AppError(
          413,
          'payload_too_large',
          `body: holds more than ${max} spans, the most one export may carry (TALLY_OTLP_MAX_SPANS); ` +
            "lower the exporter's batch size (OpenTelemetry SDKs: OTEL_BSP_MAX_EXPORT_BATCH_SIZE; Collector: send_batch_max_size)",
        )
    },
    group() {
      if (++groups > max)
        throw new AppError(
          413,
          'payload_too_large',
          `body: holds more than ${max} resourceSpans and scopeSpans, as many as the spans one export may carry (TALLY_OTLP_MAX_SPANS)`,
        )
    },
  }
}

/**
 * The spans of the (decompressed) body, or the whole request refused: 400 when the body is not an
 * ExportTraceServiceRequest at all, 413 past `maxSpans` spans (counted before any is decoded).
 */
export function decodeExport(body: Uint8Array, encoding: OtlpEncoding, maxSpans: number): DecodedExport {
  return encoding === 'protobuf' ? decodeBinary(body, maxSpans) : decodeJson(body, maxSpans)
}

const at = (r: number, s: number, i: number) => `resourceSpans.${r}.scopeSpans.${s}.spans.${i}`

/** Calls `visit` with each length-delimited field numbered `no` of a message's bytes, in order. */
function eachField(bytes: Uint8Array, no: number, visit: (field: Uint8Array) => void): void {
  const reader = new BinaryReader(bytes)
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag()
    if (field === no && wireType === WireType.LengthDelimited) visit(reader.bytes())
    else reader.skip(wireType, field)
  }
}

function fieldsOf(bytes: Uint8Array, no: number): Uint8Array[] {
  const found: Uint8Array[] = []
  eachField(bytes, no, (field) => found.push(field))
  return found
}

/**
 * ExportTraceServiceRequest: resource_spans = 1; ResourceSpans: resource = 1, scope_spans = 2;
 * ScopeSpans: spans = 2. The frame is walked by hand, each span decoded alone. It is counted
 * first, holding nothing: a body of millions of empty spans is refused before it is laid out.
 */
function decodeBinary(body: Uint8Array, maxSpans: number): DecodedExport {
  let frame: { resource: Uint8Array[]; scopes: Uint8Array[][] }[]
  try {
    const count = frameCounter(maxSpans)
    eachField(body, 1, (rs) => {
      count.group()
      eachField(rs, 2, (ss) => {
        count.group()
        eachField(ss, 2, count.span)
      })
    })
    frame = fieldsOf(body, 1).map((rs) => ({
      resource: fieldsOf(rs, 1),
      scopes: fieldsOf(rs, 2).map((ss) => fieldsOf(ss, 2)),
    }))
  } catch (err) {
    if (err instanceof AppError) throw err
    throw badRequest(`body: is not a protobuf ExportTraceServiceRequest (${protobufProblem(err)})`)
  }

  const rejected: string[] = []
  const options = { readUnknownFields: false, recursionLimit: RECURSION_LIMIT }
  const resources = frame.map(({ resource, scopes }, r) => {
    let decoded: Resource | undefined
    try {
      // Occurrences of a message field merge: their bytes back to back decode as one.
      if (resource.length > 0) decoded = fromBinary(ResourceSchema, Buffer.concat(resource), options)
    } catch (err) {
      return rejectAll(rejected, scopes, `resourceSpans.${r}.resource: ${protobufProblem(err)}`)
    }
    const spans: SpanAt[] = []
    scopes.forEach((list, s) => {
      list.forEach((bytes, i) => {
        try {
          spans.push({ span: fromBinary(SpanSchema, bytes, options), where: at(r, s, i) })
        } catch (err) {
          rejected.push(`${at(r, s, i)}: ${protobufProblem(err)}`)
        }
      })
    })
    return { resource: decoded, spans }
  })
  return { resources, rejected }
}

/** Every span of a resource that could not be decoded is rejected, for the resource's reason. */
function rejectAll(rejected: string[], scopes: unknown[][], reason: string): ResourceAt {
  const count = scopes.reduce((n, spans) => n + spans.length, 0)
  for (let i = 0; i < count; i++) rejected.push(reason)
  return { resource: undefined, spans: [] }
}

type Json = Record<string, unknown>

/** `value[key]` as a list: absent or null is empty; anything else than an array is a 400 naming it. */
function listAt(value: Json, key: string, where: string): unknown[] {
  const list = value[key]
  if (list === undefined || list === null) return []
  if (!Array.isArray(list)) throw badRequest(`${where}.${key}: must be an array`)
  return list
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** OTLP/JSON: parsed whole, then each resource and span decoded alone. */
function decodeJson(body: Uint8Array, maxSpans: number): DecodedExport {
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'))
  } catch (err) {
    throw badRequest(`body: is not valid JSON (${shortMessage(err)})`)
  }
  if (!isObject(json)) throw badRequest('body: must be an OTLP/JSON ExportTraceServiceRequest object')
  const count = frameCounter(maxSpans)
  const frame = listAt(json, 'resourceSpans', 'body').map((rs, r) => {
    count.group()
    const where = `body.resourceSpans.${r}`
    if (!isObject(rs)) throw badRequest(`${where}: must be an object`)
    return {
      resource: rs.resource,
      scopes: listAt(rs, 'scopeSpans', where).map((ss, s) => {
        count.group()
        if (!isObject(ss)) throw badRequest(`${where}.scopeSpans.${s}: must be an object`)
        const spans = listAt(ss, 'spans', `${where}.scopeSpans.${s}`)
        for (let i = 0; i < spans.length; i++) count.span()
        return spans
      }),
    }
  })

  const rejected: string[] = []
  const options = { ignoreUnknownFields: true, recursionLimit: RECURSION_LIMIT }
  const resources = frame.map(({ resource, scopes }, r) => {
    let decoded: Resource | undefined
    try {
      if (resource !== undefined && resource !== null)
        decoded = fromJson(ResourceSchema, resource as JsonValue, options)
    } catch (err) {
      return rejectAll(rejected, scopes, `resourceSpans.${r}.resource: ${shortMessage(err)}`)
    }
    const spans: SpanAt[] = []
    scopes.forEach((list, s) => {
      list.forEach((span, i) => {
        const where = at(r, s, i)
        const badId = isObject(span) ? hexIdsToBase64(span) : 'must be an object'
        if (badId) {
          rejected.push(isObject(span) ? `${where}.${badId}` : `${where}: ${badId}`)
          return
        }
        try {
          spans.push({ span: fromJson(SpanSchema, span as JsonValue, options), where })
        } catch (err) {
          rejected.push(`${where}: ${shortMessage(err)}`)
        }
      })
    })
    return { resource: decoded, spans }
  })
  return { resources, rejected }
}

/**
 * OTLP/JSON writes trace and span ids as hex, where proto3 JSON (which fromJson reads) expects
 * base64: a span's are rewritten in place before it is decoded. Returns what is wrong, if anything.
 */
function hexIdsToBase64(span: Json): string | undefined {
  const convert = (holder: Json, key: string, where: string) => {
    const id = holder[key]
    if (id === undefined || id === null || id === '') return undefined
    if (typeof id !== 'string' || !HEX.test(id) || id.length % 2 !== 0)
      return `${where}${key}: must be a hex string (OTLP/JSON ids are hex, not base64)`
    holder[key] = Buffer.from(id, 'hex').toString('base64')
    return undefined
  }
  const links = Array.isArray(span.links) ? span.links : []
  return (
    ['traceId', 'spanId', 'parentSpanId'].map((key) => convert(span, key, '')).find(Boolean) ??
    links
      .flatMap((link, l) =>
        isObject(link) ? ['traceId', 'spanId'].map((key) => convert(link, key, `links.${l}.`)) : [],
      )
      .find(Boolean)
  )
}

/** Why the protobuf wire data could not be read. */
function protobufProblem(err: unknown): string {
  // The wire reader throws RangeError when a length or varint runs past the end of its bytes.
  return err instanceof RangeError ? `truncated or invalid protobuf: ${shortMessage(err)}` : shortMessage(err)
}

function shortMessage(err: unknown): string {
  const text = String((err as Error)?.message ?? err)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}
