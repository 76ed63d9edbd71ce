import type { OpenAPIV3_1 } from 'openapi-types'
import { buildPayload, buildScorePayload, testEvent } from '../../shared/webhooks/payload.ts'
import { signatureHeaders } from '../../shared/webhooks/signature.ts'
import { examples } from './examples.ts'

/**
 * The delivery of the request logRequests' example logs, to the webhook createWebhook's example
 * made, as Tally sends it: built and signed by the dispatcher's own code.
 */
const example = (() => {
  const completed = new Date('2026-11-20T09:30:01.240Z')
  const event = {
    ...testEvent('50fb8ae3-cc90-50f8-ab99-71652f7ec0c4', 'b0e59b83-0614-5173-b173-f5b89613d1d6', completed),
    created_at: new Date('2026-11-20T09:30:00.000Z'),
    latency_ms: 1240,
    time_to_first_token_ms: 310,
    provider: 'openai',
    model: 'gpt-4o-mini',
    target_url: 'https://api.openai.com/v1/chat/completions',
    prompt_tokens: 42,
    completion_tokens: 9,
    total_tokens: 51,
    cost_usd: 0.0000117,
    user_id: 'user-1842',
    session_id: 'ticket-5521',
    properties: { team: 'support', environment: 'production' },
    request_body: JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Summarise this ticket in one line.' }],
    }),
    response_body: JSON.stringify({
      choices: [{ message: { role: 'assistant', content: 'Customer cannot reset their password.' } }],
    }),
  }
  const body = buildPayload(event, true, 'request.completed')
  const headers = signatureHeaders({
    id: '0c6b1a52-5d1e-5a8e-9f3d-7c2b4e6a8d10',
    timestamp: Math.floor(completed.getTime() / 1000) + 1,
    body,
    keys: [examples.createWebhook.answer.data.hmac_key],
  })
  return { body: JSON.parse(body.toString()) as unknown, headers }
})()

/** The feedback given on that request (POST /v1/request/{id}/feedback), as its delivery's body. */
const scoreExample = (() => {
  const given = new Date('2026-11-20T09:31:12.500Z')
  const body = buildScorePayload(
    {
      organization_id: '50fb8ae3-cc90-50f8-ab99-71652f7ec0c4',
      kind: 'score',
      score_id: '9a3c2f10-7d4e-5b61-8c2a-3f5e7d9b1c42',
      target_kind: 'request',
      request_id: 'b0e59b83-0614-5173-b173-f5b89613d1d6',
      session_id: '',
      name: 'feedback',
      data_type: 'boolean',
      value: 1,
      string_value: '',
      source: 'api',
      comment: '',
      created_at: given,
      version: 1795685472500000,
      deleted: false,
    },
    'feedback.created',
    { sessionId: 'ticket-5521' },
  )
  const headers = signatureHeaders({
    id: '5e2d9c47-1b8a-5f3e-a6c4-2d7f9e1b3a58',
    timestamp: Math.floor(given.getTime() / 1000) + 1,
    body,
    keys: [examples.createWebhook.answer.data.hmac_key],
  })
  return { body: JSON.parse(body.toString()) as unknown, headers }
})()

/** The headers every delivery carries (signature.ts): their value's schema and meaning. */
const HEADERS: [name: string, schema: OpenAPIV3_1.ParameterObject['schema'], description: string][] = [
  [
    'X-Service-Signature',
    { type: 'string', pattern: '^[0-9a-f]{64}$' },
    'Lowercase hex HMAC-SHA256 of the raw body, keyed with the hmac_key string (UTF-8): the oldest active key',
  ],
  [
    'webhook-id',
    { type: 'string', format: 'uuid' },
    'Standard Webhooks: the delivery id, the same on every attempt',
  ],
  [
    'webhook-timestamp',
    { type: 'string', pattern: '^[0-9]+$' },
    'Standard Webhooks: Unix seconds of this attempt',
  ],
  [
    'webhook-signature',
    { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
    'Standard Webhooks: "v1,<base64 HMAC-SHA256 of id.timestamp.body>" per active key, space-separated; ' +
      'the key is the base64 part of the whsec_ hmac_key, decoded',
  ],
]

/** A delivery POST: its signed headers, its body's schema and what each answer means. */
function deliveryOperation(
  operation: Pick<OpenAPIV3_1.OperationObject, 'operationId' | 'summary' | 'description'>,
  schema: string,
  sample: { body: unknown; headers: Record<string, string | undefined> },
): OpenAPIV3_1.PathItemObject {
  return {
    post: {
      ...operation,
      tags: ['webhook-deliveries'],
      security: [],
      parameters: HEADERS.map(
        ([name, schema, description]): OpenAPIV3_1.ParameterObject => ({
          name,
          in: 'header',
          required: true,
          schema,
          description,
          example: sample.headers[name.toLowerCase()],
        }),
      ),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { $ref: `#/components/schemas/${schema}` },
            example: sample.body,
          },
        },
      },
      responses: {
        '2XX': { description: 'Delivered: any 2xx within 5 s' },
        '410': { description: 'Gone: the delivery fails at once and the webhook is disabled' },
        default: {
          description:
            'Any other answer, a redirect or none within 5 s: the attempt failed and is retried on the schedule, never sooner than Retry-After',
        },
      },
    },
  }
}

/**
 * The POSTs Tally sends to webhook destinations, with the payloads of
 * services/shared/webhooks/payload.ts and the headers of signature.ts (docs/webhooks.md says how
 * to verify them).
 */
export const webhookDeliveries: Record<string, OpenAPIV3_1.PathItemObject> = {
  requestCompleted: deliveryOperation(
    {
      operationId: 'requestCompleted',
      summary:
        'A request was processed (metadata.event "request.completed"), or a test was sent ("webhook.test")',
      description:
        'Sent to the destination of every active webhook of the organization whose sampleRate and ' +
        'propertyFilters take the request, at least once: deduplicate by webhook-id or ' +
        'metadata.requestId. Verify both signatures over the raw body before parsing it.',
    },
    'WebhookPayload',
    example,
  ),
  scoreCreated: deliveryOperation(
    {
      operationId: 'scoreCreated',
      summary:
        'A score was given or updated (metadata.event "score.created"), or feedback ("feedback.created")',
      description:
        'Sent to the destination of every active webhook of the organization whose config.events ' +
        'names the event and whose sampleRate (by score id) and filters take it, at least once: ' +
        'deduplicate by webhook-id. A later version of the score is delivered again under the same ' +
        'score.id. Verify both signatures over the raw body before parsing it.',
    },
    'ScoreWebhookPayload',
    scoreExample,
  ),
}
