import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { TestOrg, TestTally } from '../../support/harness.ts'

export interface CreatedWebhook {
  id: string
  destination: string
  hmac_key: string
  config: { sampleRate: number; propertyFilters: { key: string; value: string }[] }
  includeData: boolean
  state: string
  created_at: string
}

/** Creates a webhook to a fresh path of `base`; the path tells its deliveries apart. */
export async function createWebhook(
  tally: TestTally,
  org: TestOrg,
  base: string,
  body: Record<string, unknown> = {},
): Promise<CreatedWebhook & { path: string }> {
  const path = `/${randomUUID()}`
  const res = await tally.app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: org.headers,
    payload: { destination: `${base}${path}`, ...body },
  })
  expect(res.statusCode, res.body).toBe(201)
  return { ...(res.json().data as CreatedWebhook), path }
}

export interface DeliveryView {
  id: string
  request_id: string
  event: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_response_status: number | null
  last_response_body: string | null
  last_error: string | null
  next_attempt_at: string | null
}

export async function deliveriesOf(
  tally: TestTally,
  org: TestOrg,
  webhookId: string,
  query = '',
): Promise<DeliveryView[]> {
  const res = await tally.app.inject({
    method: 'GET',
    url: `/v1/webhooks/${webhookId}/deliveries${query}`,
    headers: org.headers,
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().data as DeliveryView[]
}

/** POST /v1/webhooks/{id}/test or /rotate-key, as the organization. */
export function postWebhookAction(
  tally: TestTally,
  org: TestOrg,
  webhookId: string,
  action: 'test' | 'rotate-key',
) {
  return tally.app.inject({
    method: 'POST',
    url: `/v1/webhooks/${webhookId}/${action}`,
    headers: org.headers,
  })
}
