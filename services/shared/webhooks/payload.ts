import { createHash } from 'node:crypto'
import { z } from 'zod'
import { parseEventBody, type RequestEvent } from '../events/request-event.ts'

/** The `version` of every payload; changes only when the payload shape does. */
const PAYLOAD_VERSION = '2026-11-01'

const eventKind = z.enum(['request.completed', 'webhook.test'])
export type EventKind = z.infer<typeof eventKind>

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

/**
 * The delivery body of spec 6.1, as the bytes that will be stored, signed and sent. Without
 * data (`includeData: false`) the `request` and `response` objects are left out; everything
 * else stays.
 */
export function buildPayload(event: RequestEvent, includeData: boolean, kind: EventKind): Buffer {
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
 * a fixed point in [0, 100), so a redelivered or retried event always gets the same answer.
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
