import { describe, expect, it } from 'vitest'
import { sampleEvent } from '../support/events.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook } from './support/api.ts'
import { type Receiver, startReceiver } from './support/receiver.ts'
import { webhookSuite } from './support/suite.ts'

const suite = webhookSuite({
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  TALLY_WEBHOOK_CONCURRENCY: '4',
  TALLY_WEBHOOK_CONCURRENCY_PER_DESTINATION: '2',
})

describe('delivery concurrency', () => {
  it('let a slow receiver hold only its own slots, so another receiver is served at once', async () => {
    // A second server is a second destination origin.
    const slow: Receiver = await startReceiver(suite.certs)
    try {
      const org = await suite.tally.newOrg()
      const slowHook = await createWebhook(suite.tally, org, slow.url)
      const fastHook = await createWebhook(suite.tally, org, suite.receiver.url)
      slow.on(slowHook.path, () => ({ delayMs: 3_000 }))
      const events = Array.from({ length: 10 }, () => sampleEvent({ organization_id: org.organizationId }))
      await suite.tally.publisher.publish(events)
      const started = Date.now()
      await waitFor(() => suite.receiver.to(fastHook.path).length === 10, {
        what: 'the fast receiver to get all 10',
      })
      // All ten reached the fast receiver while the slow one had at most its 2 slots in flight.
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(slow.to(slowHook.path).length).toBeLessThanOrEqual(2)
      expect(slow.to(slowHook.path).length).toBeGreaterThanOrEqual(1)
    } finally {
      await slow.close()
    }
  })
})
