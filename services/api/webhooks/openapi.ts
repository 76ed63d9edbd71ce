import type { OpenAPIV3_1 } from 'openapi-types'

const header = (
  name: string,
  schema: OpenAPIV3_1.ParameterObject['schema'],
  description: string,
): OpenAPIV3_1.ParameterObject => ({ name, in: 'header', required: true, schema, description })

/**
 * The POST Tally sends to every webhook destination, with
 * the payload of services/shared/webhooks/payload.ts and the headers of signature.ts
 * (docs/webhooks.md says how to verify them).
 */
export const webhookDeliveries: Record<string, OpenAPIV3_1.PathItemObject> = {
  requestCompleted: {
    post: {
      operationId: 'requestCompleted',
      tags: ['webhook-deliveries'],
      summary:
        'A request was processed (metadata.event "request.completed"), or a test was sent ("webhook.test")',
      description:
        'Sent to the destination of every active webhook of the organization whose sampleRate and ' +
        'propertyFilters take the request, at least once: deduplicate by webhook-id or ' +
        'metadata.requestId. Verify both signatures over the raw body before parsing it.',
      security: [],
      parameters: [
        header(
          'X-Service-Signature',
          { type: 'string', pattern: '^[0-9a-f]{64}$' },
          'Lowercase hex HMAC-SHA256 of the raw body, keyed with the hmac_key string (UTF-8): the oldest active key',
        ),
        header(
          'webhook-id',
          { type: 'string', format: 'uuid' },
          'Standard Webhooks: the delivery id, the same on every attempt',
        ),
        header(
          'webhook-timestamp',
          { type: 'string', pattern: '^[0-9]+$' },
          'Standard Webhooks: Unix seconds of this attempt',
        ),
        header(
          'webhook-signature',
          { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
          'Standard Webhooks: "v1,<base64 HMAC-SHA256 of id.timestamp.body>" per active key, space-separated; ' +
            'the key is the base64 part of the whsec_ hmac_key, decoded',
        ),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookPayload' } } },
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
  },
}
