import { createHash } from 'node:crypto'
import { z } from 'zod'
import type { AnnotationEvent } from '../events/annotation-event.ts'
import { parseEventBody, type RequestEvent } from '../events/request-event.ts'

/** The `version` of every payload; changes only when the payload shape does. */
const PAYLOAD_VERSION = '2026-11-01'

const eventKind = z.enum(['request.completed', 'webhook.test'])
/** The events of a score given after the fact (services/shared/events/annotation-event.ts). */
const scoreEventKind = z.enum(['score.created', 'feedback.created'])
export type ScoreEventKind = z.infer<typeof scoreEventKind>
export type EventKind = z.infer<typeof eventKind> | ScoreEventKind

/**
 * The events a webhook may subscribe to (`config.events`). A webhook gets `request.completed`
 * alone unless it asks for more: a receiver never gets a shape it did not ask for.
 */
export const WEBHOOK_EVENTS = ['request.completed', ...scoreEventKind.options] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = ['request.completed']

/** The name of the score that is a request's feedback (Helicone's `{"rating": bool}`). */
const FEEDBACK_SCORE = 'feedback'

/**
 * The webhook event a score event is, or undefined: a live score is `feedback.created` when it is
 * the feedback, else `score.created` (a later version of the same score too: it is delivered
 * again, under the same score id); a tombstone and a property deliver nothing.
 */
export function scoreEventKindOf(event: AnnotationEvent): ScoreEventKind | undefined {
  if (event.kind !== 'score' || event.deleted) return undefined
  return event.name === FEEDBACK_SCORE ? 'feedback.created' : 'score.created'
}

/** One `{key, value}` of a webhook's propertyFilters, as stored and as the API shows it. */
export const propertyFilterSchema = z
  .object({ key: z.string(), value: z.string() })
  .meta({ id: 'PropertyFilter' })
export type PropertyFilter = z.infer<typeof propertyFilterSchema>

const recordedBody = (what: string) =>
  z
    .unknown()
    .optional()
    .describe(
      `The ${what} as recorded: parsed JSON, a string when it was not JSON, null when empty; absent when the webhook's includeData is false`,
    )

/** The delivery body of spec 6.1, as the OpenAPI document's `webhooks` describes it. */
const webhookPayload = z
  .object({
    version: z.literal(PAYLOAD_VERSION).describe('Changes only when the shape does'),
    metadata: z.object({
      requestId: z.uuid(),
      organizationId: z.uuid(),
      timestamp: z.iso.datetime().describe('When the request completed'),
      event: eventKind.describe('webhook.test comes from POST /v1/webhooks/{id}/test only'),
    }),
    request: recordedBody('model request'),
    response: recordedBody('model response'),
    metrics: z.object({
      latency_ms: z.number().int(),
      cost_usd: z.number().describe('USD'),
      cached: z.boolean(),
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int(),
      total_tokens: z.number().int(),
    }),
    properties: z.record(z.string(), z.string()),
  })
  .meta({ id: 'WebhookPayload' })

/** The delivery body of a score event, as the OpenAPI document's `webhooks` describes it. */
const scoreWebhookPayload = z
  .object({
    version: z.literal(PAYLOAD_VERSION).describe('Changes only when the shape does'),
    metadata: z.object({
      event: scoreEventKind.describe(
        'feedback.created for the score named feedback, score.created for any other',
      ),
      organizationId: z.uuid(),
      requestId: z.uuid().nullable().describe('The scored request; null for a score of a session'),
      sessionId: z
        .string()
        .nullable()
        .describe(
          "The session: the scored session, or the scored request's session; null when the request has none or was not stored yet",
        ),
      timestamp: z.iso.datetime().describe('When the score was given'),
    }),
    score: z.object({
      id: z
        .uuid()
        .describe('The same on every later version of the score: an update is delivered again under it'),
      name: z.string(),
      // Each alternative described: a union of bare types would be one `type` array, which
      // strict JSON Schema tools refuse.
      value: z.union([
        z.number().describe('numeric'),
        z.boolean().describe('boolean'),
        z.string().describe('categorical or text'),
      ]),
      data_type: z.enum(['numeric', 'boolean', 'categorical', 'text']),
      source: z.string().describe('api, annotation or eval'),
      comment: z.string(),
      version: z
        .number()
        .int()
        .describe(
          'Orders the versions of one score: a delivery with a lower version than one received is older',
        ),
    }),
  })
  .meta({ id: 'ScoreWebhookPayload' })

/** What a score event tells about the request it scores, looked up when it is delivered. */
interface ScoredRequest {
  sessionId: string
}

/**
 * The delivery body of a score event (`kind` from {@link scoreEventKindOf}), as the bytes that
 * will be stored, signed and sent. `request` is the scored request as stored, when it is.
 */
export function buildScorePayload(
  event: AnnotationEvent,
  kind: ScoreEventKind,
  request: ScoredRequest | undefined,
): Buffer {
  const isRequest = event.target_kind === 'request'
  const sessionId = isRequest ? request?.sessionId || null : event.session_id
  const payload: z.input<typeof scoreWebhookPayload> = {
    version: PAYLOAD_VERSION,
    metadata: {
      event: kind,
      organizationId: event.organization_id,
      requestId: isRequest ? event.request_id : null,
      sessionId,
      timestamp: event.created_at.toISOString(),
    },
    score: {
      id: event.score_id,
      name: event.name,
      value:
        event.data_type === 'boolean'
          ? event.value !== 0
          : event.data_type === 'numeric'
            ? event.value
            : event.string_value,
      data_type: event.data_type,
      source: event.source,
      comment: event.comment,
      version: event.version,
    },
  }
  return Buffer.from(JSON.stringify(payload))
}

/**
 * The delivery body of spec 6.1, as the bytes that will be stored, signed and sent. Without
 * data (`includeData: false`) the `request` and `response` objects are left out; everything
 * else stays.
 */
export function buildPayload(
  event: RequestEvent,
  includeData: boolean,
  kind: z.infer<typeof eventKind>,
): Buffer {
  const payload: z.input<typeof webhookPayload> = {
    version: PAYLOAD_VERSION,
    metadata: {
      requestId: event.request_id,
      organizationId: event.organization_id,
      timestamp: event.completed_at.toISOString(),
      event: kind,
    },
    ...(includeData
      ? { request: parseEventBody(event.request_body), response: parseEventBody(event.response_body) }
      : {}),
    metrics: {
      latency_ms: event.latency_ms,
      cost_usd: event.cost_usd,
      cached: event.cached,
      prompt_tokens: event.prompt_tokens,
      completion_tokens: event.completion_tokens,
      total_tokens: event.total_tokens,
    },
    properties: event.properties,
  }
  return Buffer.from(JSON.stringify(payload))
}

/**
 * Deterministic sampling: the first 32 bits of sha256("webhookId:requestId") place each pair at
 * a fixed point in [0, 100), so a redelivered or retried event always gets the same answer. A
 * score event is keyed by its score id: every version of a score gets the same answer.
 */
export function isSampled(webhookId: string, requestId: string, sampleRate: number): boolean {
  if (sampleRate >= 100) return true
  if (sampleRate <= 0) return false
  const digest = createHash('sha256').update(`${webhookId}:${requestId}`).digest()
  return (digest.readUInt32BE(0) / 2 ** 32) * 100 < sampleRate
}

/** A synthetic request event for `POST /v1/webhooks/{id}/test`. */
export function testEvent(organizationId: string, requestId: string, now: Date): RequestEvent {
  return {
    request_id: requestId,
    organization_id: organizationId,
    created_at: now,
    completed_at: now,
    latency_ms: 0,
    time_to_first_token_ms: null,
    provider: 'tally',
    model: 'tally-test',
    status: 200,
    target_url: '',
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    cached: false,
    user_id: '',
    session_id: '',
    session_name: '',
    session_path: '',
    properties: {},
    prompt_id: '',
    prompt_version_id: '',
    trace_id: '',
    span_id: '',
    parent_span_id: '',
    request_body: JSON.stringify({
      model: 'tally-test',
      messages: [{ role: 'user', content: 'This is a test event from Tally.' }],
    }),
    response_body: JSON.stringify({
      id: `test-${requestId}`,
      choices: [{ index: 0, message: { role: 'assistant', content: 'It works.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    }),
  }
}
