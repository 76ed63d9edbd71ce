import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import { createWebhookRepo } from '../../../services/api/webhooks/repo.ts'
import { apiAs } from '../../support/api.ts'
import type { TestOrg, TestTally } from '../../support/harness.ts'

export interface CreatedWebhook {
  id: string
  destination: string
  hmac_key: string
  config: { sampleRate: number; propertyFilters: { key: string; value: string }[]; filter?: unknown }
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
  const created = await apiAs(tally.app, org).post('/v1/webhooks', { destination: `${base}${path}`, ...body })
  expect(created.status, created.error ?? '').toBe(201)
  return { ...(created.data as CreatedWebhook), path }
}

/**
 * A webhook stored without the API's creation checks, as an older Tally could have stored it
 * (or one whose name resolves to a private address only later): for testing delivery-time guards.
 */
export async function storeWebhook(
  tally: TestTally,
  org: TestOrg,
  base: string,
): Promise<{ id: string; path: string }> {
  const path = `/${randomUUID()}`
  const { webhook } = await createWebhookRepo(tally.sql).create({
    organizationId: org.organizationId,
    destination: `${base}${path}`,
    sampleRate: 100,
    propertyFilters: [],
    includeData: true,
  })
  return { id: webhook.id, path }
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
  const listed = await apiAs(tally.app, org).get(`/v1/webhooks/${webhookId}/deliveries${query}`)
  expect(listed.status, listed.error ?? '').toBe(200)
  return listed.data as DeliveryView[]
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
