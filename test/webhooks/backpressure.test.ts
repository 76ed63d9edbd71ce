import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { WorkerOptions } from '../../services/dispatcher/worker.ts'
import { engines } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { deliveriesOf, storeWebhook } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'
import { outcomeWriteFailures, workerParts } from './support/worker.ts'

const requestIdOf = (body: Buffer) => JSON.parse(body.toString()).metadata.requestId as string
const MB = 1024 * 1024

describe.skipIf(!engines().kafkaBrokers)('delivery worker back-pressure', () => {
  // Tally without its dispatcher (roles apart need Kafka): the worker under test is the only one
  // claiming.
  const suite = webhookSuite({}, { api: true, ingest: false, dispatcher: false, exporter: false })

  /**
   * `count` deliveries due before a worker (with `options`) starts, whose outcome writes Postgres
   * refuses: its poller claims at once, then sleeps for a minute unless woken, so everything
   * after the first claim depends on being woken when room frees. `held` is asked what the
   * worker holds after three refused writes (each attempt's end was a chance to claim more);
   * then the writes recover, and every delivery must arrive once.
   */
  async function heldWhileOutcomesFail(
    count: number,
    padding: number,
    options: Partial<WorkerOptions>,
    held: (claimed: { n: number; bytes: number }, received: number) => void,
  ) {
    const org = await suite.tally.newOrg()
    // Stored directly: this API refuses loopback destinations; the dispatcher here allows them.
    const hook = await storeWebhook(suite.tally, org, suite.receiver.url)
    const { sql } = suite.tally
    const failures = await outcomeWriteFailures(sql)
    await failures.fail(hook.id)
    const refusedBefore = await failures.refused()
    const parts = await workerParts(suite)
    const requestIds = Array.from({ length: count }, () => randomUUID())
    await parts.repo.insert(
      requestIds.map((requestId) => ({
        webhookId: hook.id,
        requestId,
        event: 'request.completed' as const,
        body: Buffer.from(JSON.stringify({ metadata: { requestId }, pad: 'x'.repeat(padding) })),
        claimed: false,
      })),
      60_000,
    )
    const worker = parts.worker({ pollMs: 60_000, ...options })
    try {
      await waitFor(async () => (await failures.refused()) >= refusedBefore + 3, {
        what: 'three refused outcome writes',
        timeoutMs: 10_000,
      })
      const [claimed] = await sql<{ n: number; bytes: number }[]>`
        select count(*)::int as n, coalesce(sum(octet_length(body)), 0)::int as bytes
        from webhook_deliveries where webhook_id = ${hook.id} and claim_token is not null`
      held(claimed ?? { n: 0, bytes: 0 }, suite.receiver.to(hook.path).length)

      await failures.recover(hook.id)
      await waitFor(
        async () =>
          (await deliveriesOf(suite.tally, org, hook.id, '?limit=100')).filter(
            (d) => d.status === 'delivered',
          ).length === count,
        { what: `all ${count} delivered`, timeoutMs: 20_000 },
      )
      const received = suite.receiver.to(hook.path).map((r) => requestIdOf(r.body))
      expect(received.sort()).toEqual([...requestIds].sort())
    } finally {
      await failures.recover(hook.id)
      await worker.stop()
      await parts.close()
    }
  }

  it('claim no more than it can hold while outcomes cannot be written, then deliver the rest once each', async () => {
    const maxHeld = 4
    await heldWhileOutcomesFail(20, 0, { maxInFlight: 2, maxHeld }, (claimed, received) => {
      // Due retries get half of what a process holds.
      expect(claimed.n).toBeLessThanOrEqual(maxHeld / 2)
      expect(received).toBeLessThanOrEqual(maxHeld / 2)
    })
  }, 30_000)

  it('holds at most its bytes of bodies: one-megabyte deliveries are claimed a few at a time, then each delivered once', async () => {
    const maxHeldBytes = 3 * MB
    await heldWhileOutcomesFail(12, MB, { maxInFlight: 8, maxHeld: 100, maxHeldBytes }, (claimed) => {
      // Due retries get half of the bytes; a claim always takes one body, so one may pass the half.
      expect(claimed.n).toBeGreaterThanOrEqual(1)
      expect(claimed.bytes).toBeLessThanOrEqual(maxHeldBytes / 2 + MB + 1024)
    })
  }, 40_000)
})
