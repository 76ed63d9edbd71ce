/**
 * What the OpenAPI document shows for the webhook management routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

/** The envelope of a success. */
const ok = (data: unknown) => ({ data, error: null })

const webhook = {
  id: '3613d6fb-c9c6-5286-a919-506605f8a277',
  destination: 'https://hooks.example.com/tally',
  config: {
    events: ['request.completed', 'feedback.created'],
    sampleRate: 100,
    propertyFilters: [],
    filter: {
      request_response_rmt: {
        status: {
          gte: 500,
        },
      },
    },
  },
  includeData: true,
  state: 'active',
  disabled_reason: null,
  created_at: '2026-11-26T10:15:17.265Z',
}

/** The test delivery testWebhook's example sent. */
const delivery = {
  id: 'afb04225-0a25-5a15-8db8-145e515ba0f2',
  request_id: '7b7e961d-254e-5401-8ee5-9452b893e55b',
  event_key: '7b7e961d-254e-5401-8ee5-9452b893e55b',
  event: 'webhook.test',
  status: 'delivered',
  attempts: 1,
  last_attempt_at: '2026-11-26T10:15:17.275Z',
  last_response_status: 200,
  last_response_body: 'ok',
  last_error: null,
  last_duration_ms: 84,
  next_attempt_at: null,
  created_at: '2026-11-26T10:15:17.279Z',
  delivered_at: '2026-11-26T10:15:17.275Z',
}

export const examples = {
  createWebhook: {
    body: {
      destination: 'https://hooks.example.com/tally',
      config: {
        events: ['request.completed', 'feedback.created'],
        sampleRate: 100,
        filter: {
          request_response_rmt: {
            status: {
              gte: 500,
            },
          },
        },
      },
      includeData: true,
    },
    answer: {
      data: { ...webhook, hmac_key: 'whsec_MfKQ9r8GKYqXG4Vi4wWx6mW+L0yF6XyKzzxVq3JqZ3g=' },
      error: null,
    },
  },
  listWebhooks: { answer: ok([webhook]) },
  deleteWebhook: { parameters: { id: webhook.id }, answer: ok(null) },
  testWebhook: {
    parameters: { id: webhook.id },
    answer: {
      data: {
        delivery_id: 'afb04225-0a25-5a15-8db8-145e515ba0f2',
        delivered: true,
        status: 200,
        duration_ms: 84,
        error: null,
      },
      error: null,
    },
  },
  listWebhookDeliveries: {
    parameters: { id: webhook.id, limit: 10, status: 'delivered' },
    answer: { ...ok([delivery]), next_cursor: null },
  },
  retryWebhookDelivery: {
    parameters: { id: webhook.id, deliveryId: delivery.id },
    answer: ok({
      ...delivery,
      ...{
        status: 'pending',
        last_response_status: 503,
        last_response_body: 'Service Unavailable',
        last_error: 'HTTP 503',
        last_duration_ms: 3,
        next_attempt_at: '2026-11-26T10:15:17.297Z',
        delivered_at: null,
      },
    }),
  },
  rotateWebhookKey: {
    parameters: { id: webhook.id },
    answer: {
      data: {
        id: '3613d6fb-c9c6-5286-a919-506605f8a277',
        hmac_key: 'whsec_MfKQ9r8GKYqXG4Vi4wWx6mW+L0yF6XyKzzxVq3JqZ3g=',
        previous_key_expires_at: '2026-11-27T10:15:17.291Z',
      },
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
