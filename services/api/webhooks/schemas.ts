import { z } from 'zod'
import { filterNode } from '../../shared/filters/schema.ts'
import {
  DEFAULT_WEBHOOK_EVENTS,
  propertyFilterSchema,
  WEBHOOK_EVENTS,
} from '../../shared/webhooks/payload.ts'
import { webhookRowSchema } from '../../shared/webhooks/webhook-row.ts'
import { cursorInput } from '../http/cursor.ts'
import { isoTimestamp } from '../http/envelope.ts'
import { pageParams } from '../http/paging.ts'

// Strict: the WHATWG parser would quietly repair whitespace, `https:///host` and backslashes,
// storing a destination other than the one the caller wrote.
const httpsUrl = z
  .string('must be a string')
  .max(2_048, 'must be at most 2048 characters')
  .refine((text) => !/[\s\\\p{Cc}]/u.test(text), {
    message: 'must not contain whitespace, control characters or backslashes',
    abort: true,
  })
  .refine((text) => {
    if (!/^https:\/\/[^/?#]/i.test(text)) return false
    try {
      const url = new URL(text)
      return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password
    } catch {
      return false
    }
  }, 'must be an https:// URL with a host and without credentials')

const propertyFilterInput = z.strictObject({
  key: z.string('must be a string').min(1, 'must not be empty').max(256, 'must be at most 256 characters'),
  value: z.string('must be a string').max(1_024, 'must be at most 1024 characters'),
})

const webhookEvent = z.enum(WEBHOOK_EVENTS, `must be one of ${WEBHOOK_EVENTS.join(', ')}`)

const webhookEvents = z
  .array(webhookEvent, 'must be an array of event names')
  .min(1, 'must not be empty')
  .refine((events) => new Set(events).size === events.length, 'must not name an event twice')

const webhookConfig = z.strictObject({
  events: webhookEvents
    .default([...DEFAULT_WEBHOOK_EVENTS])
    .describe(
      'The events it gets: request.completed (the default alone), score.created, feedback.created (docs/webhooks.md)',
    ),
  sampleRate: z
    .number('must be a number')
    .min(0, 'must be between 0 and 100')
    .max(100, 'must be between 0 and 100')
    .default(100)
    .describe('Percentage of events sent, 0 to 100; decided per request, the same on every redelivery'),
  propertyFilters: z
    .array(propertyFilterInput, 'must be an array of {key, value}')
    .max(50, 'must have at most 50 items')
    .default([])
    .describe("Every {key, value} must equal the event's property of that key"),
  filter: filterNode
    .optional()
    .describe(
      'A filter tree of the request-query language (request-level fields and properties); only events it matches are sent, and it must hold together with propertyFilters',
    ),
})

export const createBody = z.strictObject({
  destination: httpsUrl.describe('HTTPS URL that receives deliveries'),
  config: webhookConfig.default({
    events: [...DEFAULT_WEBHOOK_EVENTS],
    sampleRate: 100,
    propertyFilters: [],
  }),
  includeData: z
    .boolean('must be a boolean')
    .default(true)
    .describe('Whether deliveries carry the request and response bodies'),
})

export const webhook = z
  .object({
    id: z.uuid(),
    destination: z.string(),
    config: z.object({
      events: z
        .array(webhookEvent)
        .optional()
        .describe('The events it gets, as given at creation; absent: request.completed alone (the default)'),
      sampleRate: z.number(),
      propertyFilters: z.array(propertyFilterSchema),
      filter: filterNode.optional().describe('The filter tree as given at creation; absent when none'),
    }),
    includeData: z.boolean(),
    state: webhookRowSchema.shape.state.describe('disabled after a receiver answered 410 Gone'),
    disabled_reason: z.string().nullable(),
    created_at: isoTimestamp,
  })
  .meta({ id: 'Webhook' })

const deliveryStatus = z.enum(['pending', 'delivered', 'failed'])

export const delivery = z
  .object({
    id: z.uuid().describe('Also the webhook-id header of every attempt'),
    request_id: z.uuid().nullable().describe('The request it is about; null for a score event'),
    event_key: z
      .string()
      .describe(
        'What it is about, one delivery per webhook and key: the request id, or score:<score id>:<version> for a score event',
      ),
    event: z.string(),
    status: deliveryStatus,
    attempts: z.number().int(),
    last_attempt_at: isoTimestamp.nullable(),
    last_response_status: z.number().int().nullable(),
    last_response_body: z.string().nullable().describe('The first 2 KB of the last response body'),
    last_error: z.string().nullable(),
    last_duration_ms: z.number().int().nullable(),
    next_attempt_at: isoTimestamp.nullable(),
    created_at: isoTimestamp,
    delivered_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'Delivery' })

export const idParams = z.object({ id: z.string() })
export const deliveryParams = z.object({ id: z.string(), deliveryId: z.string() })
export const pageQuery = z.object({
  ...pageParams,
  cursor: cursorInput.optional(),
  status: z.enum(deliveryStatus.options, 'must be one of pending, delivered, failed').optional(),
})

export const createdWebhook = webhook
  .extend({ hmac_key: z.string().describe('The signing key: in this answer and never again') })
  .meta({ id: 'CreatedWebhook' })

export const testResult = z
  .object({
    delivery_id: z.uuid(),
    delivered: z.boolean(),
    status: z.number().int().nullable().describe("The receiver's HTTP status"),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
  })
  .meta({ id: 'WebhookTestResult' })

export const rotatedKey = z.object({
  id: z.uuid(),
  hmac_key: z.string(),
  previous_key_expires_at: isoTimestamp,
})

/** A webhook as the API reads it: every column but its keys. */
export const webhookRow = webhookRowSchema.omit({
  hmac_key: true,
  previous_hmac_key: true,
  previous_key_expires_at: true,
})
export type WebhookRow = z.output<typeof webhookRow>

/** A delivery as the API reads it, which is what it answers. */
export type DeliveryRow = z.output<typeof delivery>
