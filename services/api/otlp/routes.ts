import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { Counter } from 'prom-client'
import { z } from 'zod'
import { AppError } from '../../shared/errors.ts'
import { principalOf } from '../http/auth.ts'
import { bodyErrorResponses, errorResponses } from '../http/envelope.ts'
import { rawBodyDocumented } from '../http/openapi.ts'
import { metadata } from '../requests/helicone.ts'
import type { IntakeEvent } from '../requests/intake.ts'
import type { Intake } from '../requests/service.ts'
import { decodeContent, decodeRequest, encodeResponse, type OtlpEncoding } from './decode.ts'
import { type ExportDefaults, mapExport } from './mapping.ts'

const spans = new Counter({
  name: 'tally_otlp_spans_total',
  help: 'Spans received through OTLP: stored as requests, skipped (not a model call), or rejected (partial_success)',
  labelNames: ['outcome'],
})
const incomplete = new Counter({
  name: 'tally_otlp_spans_incomplete_total',
  help: 'Model-call spans stored without an attribute Tally maps (the row names it in properties["tally.missing"])',
  labelNames: ['missing'],
})

// Path, operationId. /v1/otel/v1/traces is where a Collector's otlphttp exporter posts with
// endpoint <tally>/v1/otel; /v1/trace/log is where Helicone's async SDK posts.
const ROUTES = [
  ['/v1/traces', 'exportTraces'],
  ['/v1/otel/v1/traces', 'exportTracesOtel'],
  ['/v1/trace/log', 'exportTracesHelicone'],
] as const

const MEDIA_TYPES: Record<string, OtlpEncoding> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
}

/** At most this many rejection reasons are named in partial_success.error_message. */
const REASONS_SHOWN = 3

const unsupportedMediaType = (given: string) =>
  new AppError(
    415,
    'unsupported_media_type',
    `Content-Type: must be application/x-protobuf or application/json, got ${JSON.stringify(given.slice(0, 80))}`,
  )

function encodingOf(request: FastifyRequest): OtlpEncoding {
  const given = request.headers['content-type'] ?? ''
  const media = (given.split(';')[0] as string).trim().toLowerCase()
  const encoding = MEDIA_TYPES[media]
  if (!encoding) throw unsupportedMediaType(given)
  return encoding
}

/** Session, user and properties the export request's Helicone-* / Tally-* headers give every span. */
function defaultsOf(request: FastifyRequest): ExportDefaults {
  const { meta, properties } = metadata(request.raw.rawHeaders)
  const defaults: ExportDefaults = { properties: { ...properties } }
  if (meta['session-id']) defaults.sessionId = meta['session-id']
  if (meta['session-name']) defaults.sessionName = meta['session-name']
  if (meta['session-path']) defaults.sessionPath = meta['session-path']
  if (meta['user-id']) defaults.userId = meta['user-id']
  return defaults
}

const bytes = { type: 'string', format: 'binary' }

/**
 * OTLP/HTTP trace intake: model-call spans become request events (docs/requests.md, "OpenTelemetry")
 * through the same intake as POST /v1/request/log, so they are durable before the 200.
 */
export function otlpRoutes(deps: {
  intake: Intake
  maxBytes: number
  maxEvents: number
}): FastifyPluginAsyncZod {
  return async (app) => {
    // This plugin's own parsers: the raw body (protobuf or JSON, maybe gzip), checked in the
    // handler; any other media type is a 415 that names the two.
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.maxBytes }, (_request, body, done) =>
      done(null, body),
    )
    for (const [path, operationId] of ROUTES) {
      app.post(path, {
        bodyLimit: deps.maxBytes,
        config: { apiKeyHeader: true, swaggerTransform: documented },
        schema: {
          tags: ['requests'],
          operationId,
          summary: 'OTLP/HTTP trace export: model-call spans become requests',
          description:
            'An ExportTraceServiceRequest as application/x-protobuf or application/json (OTLP/JSON), optionally Content-Encoding: gzip; ' +
            `at most ${deps.maxBytes} bytes before and after decompression. The key: Authorization: Bearer <API_KEY>, or X-Tally-Api-Key: <API_KEY>. ` +
            'Answers an ExportTraceServiceResponse in the request encoding; partial_success counts rejected spans. Errors use the JSON envelope.',
          response: {
            200: {
              description: 'ExportTraceServiceResponse',
              content: {
                'application/x-protobuf': { schema: z.instanceof(Buffer) },
                'application/json': { schema: z.string() },
              },
            },
            ...errorResponses,
            ...bodyErrorResponses,
          },
        },
        handler: async (request, reply) => {
          const { organizationId } = principalOf(request)
          const encoding = encodingOf(request)
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
          const body = await decodeContent(raw, request.headers['content-encoding'], deps.maxBytes)
          const exported = decodeRequest(body, encoding)
          const outcomes = mapExport(exported, defaultsOf(request))

          const events: IntakeEvent[] = []
          const reasons: string[] = []
          let skipped = 0
          for (const outcome of outcomes) {
            if (outcome.kind === 'event') {
              events.push(outcome.event)
              for (const missing of outcome.missing) incomplete.inc({ missing })
            } else if (outcome.kind === 'skipped') skipped++
            else reasons.push(outcome.reason)
          }
          const places = outcomes.flatMap((o) => (o.kind === 'event' ? [o.where] : []))
          for (let start = 0; start < events.length; start += deps.maxEvents) {
            const at = (i: number) => places[start + i] ?? 'span'
            await deps.intake(organizationId, events.slice(start, start + deps.maxEvents), at)
          }
          spans.inc({ outcome: 'stored' }, events.length)
          spans.inc({ outcome: 'skipped' }, skipped)
          spans.inc({ outcome: 'rejected' }, reasons.length)

          const message =
            reasons.length === 0
              ? ''
              : `${reasons.length} span(s) rejected: ${reasons.slice(0, REASONS_SHOWN).join('; ')}` +
                (reasons.length > REASONS_SHOWN ? `; and ${reasons.length - REASONS_SHOWN} more` : '')
          const answer = encodeResponse(encoding, reasons.length, message)
          return reply.code(200).header('content-type', answer.contentType).send(answer.body)
        },
      })
    }
  }
}

const exportResponseJson = {
  type: 'object',
  description: 'ExportTraceServiceResponse (OTLP/JSON)',
  properties: {
    partialSuccess: {
      type: 'object',
      properties: {
        rejectedSpans: { type: 'string', description: 'int64 as decimal text' },
        errorMessage: { type: 'string' },
      },
    },
  },
}

const documented = rawBodyDocumented(
  {
    'application/x-protobuf': { schema: { ...bytes, description: 'ExportTraceServiceRequest (protobuf)' } },
    'application/json': {
      schema: {
        type: 'object',
        description: 'ExportTraceServiceRequest (OTLP/JSON: ids as hex)',
        properties: { resourceSpans: { type: 'array', items: { type: 'object' } } },
      },
    },
  },
  {
    description: 'Accepted: the ExportTraceServiceResponse, in the encoding of the request',
    content: {
      'application/x-protobuf': {
        schema: { ...bytes, description: 'ExportTraceServiceResponse (protobuf)' },
      },
      'application/json': { schema: exportResponseJson },
    },
  },
)
