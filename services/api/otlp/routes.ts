import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { AppError } from '../../shared/errors.ts'
import { counter, gauge } from '../../shared/metrics.ts'
import { principalOf } from '../http/auth.ts'
import { responses } from '../http/envelope.ts'
import { rawBodyDocumented } from '../http/openapi.ts'
import { type Intake, type IntakeEvent, metadata, withSessionProperties } from '../requests/interface.ts'
import type { OtlpEncoding } from './decode.ts'
import { decodeContent, encodeResponse } from './http.ts'
import type { ExportDefaults, SpanOutcome } from './mapping.ts'
import { createWorkerPool, PoolFullError, TaskDeadlineError, TaskError, type WorkerPool } from './pool.ts'
import type { DecodeTask } from './worker.ts'

const spans = counter(
  'tally_otlp_spans_total',
  'Spans received through OTLP: stored as requests, skipped (not a model call), or rejected (partial_success)',
  {
    labelNames: ['outcome'],
  },
)
const incomplete = counter(
  'tally_otlp_spans_incomplete_total',
  'Model-call spans stored without an attribute Tally maps (the row names it in properties["tally.missing"])',
  {
    labelNames: ['missing'],
  },
)

const pools = new Set<WorkerPool<DecodeTask, SpanOutcome[]>>()
gauge(
  'tally_otlp_exports_decoding',
  'OTLP exports being decoded in the decoding threads (state="running"), waiting for one (state="waiting"), and the threads (state="threads")',
  {
    labelNames: ['state'],
    collect() {
      const total = { threads: 0, running: 0, waiting: 0 }
      for (const pool of pools) {
        const stats = pool.stats()
        total.threads += stats.size
        total.running += stats.running
        total.waiting += stats.waiting
      }
      for (const [state, value] of Object.entries(total)) this.set({ state }, value)
    },
  },
)

// Path, operationId. /v1/otel/v1/traces is where a Collector's otlphttp exporter posts with
// endpoint <tally>/v1/otel; /v1/trace/log is where Helicone's async SDK posts.
// Helicone-X headers and Helicone's session properties belong to Helicone's path only.
const ROUTES = [
  ['/v1/traces', 'exportTraces', 'tally'],
  ['/v1/otel/v1/traces', 'exportTracesOtel', 'tally'],
  ['/v1/trace/log', 'exportTracesHelicone', 'helicone'],
] as const

const MEDIA_TYPES: Record<string, OtlpEncoding> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
}

/** At most this many rejection reasons are named in partial_success.error_message. */
const REASONS_SHOWN = 3

const ACCEPTED = 'must be application/x-protobuf or application/json (OTLP/HTTP)'

const unsupportedMediaType = (given: string) =>
  new AppError(
    415,
    'unsupported_media_type',
    given.trim() === ''
      ? `Content-Type: is missing; ${ACCEPTED}`
      : `Content-Type: ${ACCEPTED}, got ${JSON.stringify(given.slice(0, 80))}`,
  )

function encodingOf(request: FastifyRequest): OtlpEncoding {
  const given = request.headers['content-type'] ?? ''
  const media = (given.split(';')[0] as string).trim().toLowerCase()
  const encoding = MEDIA_TYPES[media]
  if (!encoding) throw unsupportedMediaType(given)
  return encoding
}

/**
 * Session, user and properties the export request's Tally-* headers (and on Helicone's path its
 * Helicone-* headers) give every span.
 */
function defaultsOf(request: FastifyRequest, path: 'tally' | 'helicone'): ExportDefaults {
  const { meta, properties } = metadata(request.raw.rawHeaders, path)
  const defaults: ExportDefaults = { properties: { ...properties } }
  if (meta['session-id']) defaults.sessionId = meta['session-id']
  if (meta['session-name']) defaults.sessionName = meta['session-name']
  if (meta['session-path']) defaults.sessionPath = meta['session-path']
  if (meta['user-id']) defaults.userId = meta['user-id']
  return defaults
}

const bytes = { type: 'string', format: 'binary' }

/** The decoding threads and what may wait for them (TALLY_OTLP_DECODE_THREADS and the queue bounds). */
export interface DecodePoolLimits {
  threads: number
  queuedPerOrganization: number
  queued: number
  queuedBytes: number
  timeoutMs: number
}

/** The answer for what the pool threw: the task's own 4xx, or why it did not run to its end. */
function poolError(err: unknown, limits: DecodePoolLimits): unknown {
  if (err instanceof TaskError && err.status !== undefined && err.code !== undefined)
    return new AppError(err.status, err.code, err.message)
  if (err instanceof PoolFullError)
    return err.scope === 'key'
      ? new AppError(
          429,
          'rate_limited',
          `At most ${limits.queuedPerOrganization} OTLP exports of one organization wait to be decoded; retry`,
          { retryAfterSeconds: 1 },
        )
      : new AppError(503, 'unavailable', 'Too many OTLP exports are waiting to be decoded; retry', {
          retryAfterSeconds: 1,
        })
  if (err instanceof TaskDeadlineError)
    return new AppError(
      503,
      'unavailable',
      `Decoding the export took longer than ${err.deadlineMs} ms; send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
      { retryAfterSeconds: 1 },
    )
  return err
}

/**
 * OTLP/HTTP trace intake: model-call spans become request events (docs/requests.md, "OpenTelemetry")
 * through the same intake as POST /v1/request/log, so they are durable before the 200.
 */
export function otlpRoutes(deps: {
  intake: Intake
  maxBytes: number
  maxEvents: number
  maxSpans: number
  decodePool: DecodePoolLimits
}): FastifyPluginAsyncZod {
  return async (app) => {
    const limits = deps.decodePool
    const pool = createWorkerPool<DecodeTask, SpanOutcome[]>({
      file: new URL('./worker.ts', import.meta.url),
      size: limits.threads,
      maxQueuedPerKey: limits.queuedPerOrganization,
      maxQueued: limits.queued,
      maxQueuedBytes: limits.queuedBytes,
      deadlineMs: limits.timeoutMs,
    })
    pools.add(pool)
    app.addHook('onClose', () => {
      pools.delete(pool)
      return pool.close()
    })
    // This plugin's own parsers: the raw body (protobuf or JSON, maybe gzip), checked in the
    // handler; any other media type is a 415 that names the two.
    app.removeAllContentTypeParsers()
    // Before fastify's own parsing, which names JSON alone when the header is missing.
    app.addHook('preParsing', async (request) => {
      encodingOf(request)
    })
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: deps.maxBytes }, (_request, body, done) =>
      done(null, body),
    )
    for (const [path, operationId, headers] of ROUTES) {
      app.post(path, {
        bodyLimit: deps.maxBytes,
        config: { apiKeyHeader: true, takesEvents: true, swaggerTransform: documented },
        schema: {
          tags: ['requests'],
          operationId,
          summary: 'OTLP/HTTP trace export: model-call spans become requests',
          description:
            'An ExportTraceServiceRequest as application/x-protobuf or application/json (OTLP/JSON), optionally Content-Encoding: gzip; ' +
            `at most ${deps.maxBytes} bytes before and after decompression and ${deps.maxSpans} spans (413 beyond). The key: Authorization: Bearer <API_KEY>, or X-Tally-Api-Key: <API_KEY>. ` +
            'Answers an ExportTraceServiceResponse in the request encoding; partial_success counts rejected spans. Errors use the JSON envelope. ' +
            (headers === 'helicone'
              ? "Helicone's path: Helicone-* and Tally-* headers (Tally's winning) give every span a session, user and properties; the session is also stored as the properties Helicone-Session-Id/-Name/-Path."
              : 'Tally-Session-Id/-Name/-Path, Tally-User-Id and Tally-Property-<Name> headers give every span a session, user and properties (Helicone-* headers are read on /v1/trace/log only).'),
          response: responses(
            {
              200: {
                description: 'ExportTraceServiceResponse',
                content: {
                  'application/x-protobuf': { schema: z.instanceof(Buffer) },
                  'application/json': { schema: z.string() },
                },
              },
            },
            { body: true },
          ),
        },
        handler: async (request, reply) => {
          const { organizationId } = principalOf(request)
          const encoding = encodingOf(request)
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
          const body = await decodeContent(raw, request.headers['content-encoding'], deps.maxBytes)
          // A copy the thread is given: fastify's buffer may share its memory with others.
          const copy = new Uint8Array(new ArrayBuffer(body.length))
          copy.set(body)
          const task: DecodeTask = {
            body: copy,
            encoding,
            maxSpans: deps.maxSpans,
            defaults: defaultsOf(request, headers),
          }
          const outcomes = await pool
            .run(organizationId, task, { bytes: copy.length, transfer: [copy.buffer] })
            .catch((err) => {
              throw poolError(err, limits)
            })

          const events: IntakeEvent[] = []
          const reasons: string[] = []
          let skipped = 0
          for (const outcome of outcomes) {
            if (outcome.kind === 'event') {
              events.push(headers === 'helicone' ? withSessionProperties(outcome.event) : outcome.event)
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
