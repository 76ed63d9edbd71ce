import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { engines } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { deliveriesOf, storeWebhook } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'
import { outcomeWriteFailures, workerParts } from './support/worker.ts'

const requestIdOf = (body: Buffer) => JSON.parse(body.toString()).metadata.requestId as string

describe.skipIf(!engines().kafkaBrokers)('delivery worker back-pressure', () => {
  // Tally without its dispatcher (roles apart need Kafka): the worker under test is the only one
  // claiming.
  const suite = webhookSuite({}, { api: true, ingest: false, dispatcher: false })

  it('claim no more than it can hold while outcomes cannot be written, then deliver the rest once each', async () => {
    const org = await suite.tally.newOrg()
    // Stored directly: this API refuses loopback destinations; the dispatcher here allows them.
    const hook = await storeWebhook(suite.tally, org, suite.receiver.url)
    const { sql } = suite.tally
    // Postgres refuses this webhook's outcome writes; claims still go through.
    const failures = await outcomeWriteFailures(sql)
    await failures.fail(hook.id)
    const refusedBefore = await failures.refused()

    const parts = await workerParts(suite)
    // Due before the worker starts: its poller claims them at once, then sleeps for a minute unless
    // woken, so everything after the first claim depends on being woken when room frees.
    const requestIds = Array.from({ length: 20 }, () => randomUUID())
    await parts.repo.insert(
      requestIds.map((requestId) => ({
        webhookId: hook.id,
        requestId,
        event: 'request.completed' as const,
        body: Buffer.from(JSON.stringify({ metadata: { requestId } })),
        claimed: false,
      })),
      60_000,
    )
    const maxHeld = 4
    const worker = parts.worker({ pollMs: 60_000, maxInFlight: 2, maxHeld })
    try {
      // Several refused writes (100, 200, 400 ms apart): each attempt's end was a chance to claim more.
      await waitFor(async () => (await failures.refused()) >= refusedBefore + 3, {
        what: 'three refused outcome writes',
        timeoutMs: 10_000,
      })
      const [claimed] = await sql<{ n: number }[]>`
        select count(*)::int as n from webhook_deliveries where webhook_id = ${hook.id} and claim_token is not null`
      // Due retries get half of what a process holds.
      expect(claimed?.n).toBeLessThanOrEqual(maxHeld / 2)
      expect(suite.receiver.to(hook.path).length).toBeLessThanOrEqual(maxHeld / 2)

      await failures.recover(hook.id)
      await waitFor(
        async () =>
          (await deliveriesOf(suite.tally, org, hook.id, '?limit=100')).filter(
            (d) => d.status === 'delivered',
          ).length === 20,
        { what: 'all 20 delivered', timeoutMs: 10_000 },
      )
      const received = suite.receiver.to(hook.path).map((r) => requestIdOf(r.body))
      expect(received.sort()).toEqual([...requestIds].sort())
    } finally {
      await failures.recover(hook.id)
      await worker.stop()
      await parts.close()
    }
  }, 30_000)

  it('holds at most its bytes of bodies: one-megabyte deliveries are claimed a few at a time, then each delivered once', async () => {
    const org = await suite.tally.newOrg()
    const hook = await storeWebhook(suite.tally, org, suite.receiver.url)
    const { sql } = suite.tally
    const failures = await outcomeWriteFailures(sql)
    await failures.fail(hook.id)
    const refusedBefore = await failures.refused()
    const parts = await workerParts(suite)
    const MB = 1024 * 1024
    const requestIds = Array.from({ length: 12 }, () => randomUUID())
    await parts.repo.insert(
      requestIds.map((requestId) => ({
        webhookId: hook.id,
        requestId,
        event: 'request.completed' as const,
        body: Buffer.from(JSON.stringify({ metadata: { requestId }, pad: 'x'.repeat(MB) })),
        claimed: false,
      })),
      60_000,
    )
    const maxHeldBytes = 3 * MB
    const worker = parts.worker({ pollMs: 60_000, maxInFlight: 8, maxHeld: 100, maxHeldBytes })
    try {
      await waitFor(async () => (await failures.refused()) >= refusedBefore + 3, {
        what: 'three refused outcome writes',
        timeoutMs: 10_000,
      })
      const [held] = await sql<{ n: number; bytes: number }[]>`
        select count(*)::int as n, coalesce(sum(octet_length(body)), 0)::int as bytes
        from webhook_deliveries where webhook_id = ${hook.id} and claim_token is not null`
      // Due retries get half of the bytes; a claim always takes one body, so one may pass the half.
      expect(held?.n).toBeGreaterThanOrEqual(1)
      expect(held?.bytes).toBeLessThanOrEqual(maxHeldBytes / 2 + MB + 1024)

      await failures.recover(hook.id)
      await waitFor(
        async () =>
          (await deliveriesOf(suite.tally, org, hook.id, '?limit=100')).filter(
            (d) => d.status === 'delivered',
          ).length === 12,
        { what: 'all 12 delivered', timeoutMs: 20_000 },
      )
      const received = suite.receiver.to(hook.path).map((r) => requestIdOf(r.body))
      expect(new Set(received)).toEqual(new Set(requestIds))
    } finally {
      await failures.recover(hook.id)
      await worker.stop()
      await parts.close()
    }
  }, 40_000)
})
