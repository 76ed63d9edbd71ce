import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { type ClaimedDelivery, createDeliveryRepo } from '../../services/shared/webhooks/deliveries.ts'
import { sampleEvent } from '../support/events.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook, deliveriesOf } from './support/api.ts'
import { webhookSuite } from './support/suite.ts'
import { insertClaimed, outcomeWriteFailures, workerParts } from './support/worker.ts'

const suite = webhookSuite({
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  // A lease shorter than one answer of the slow receiver below, and fewer slots than deliveries.
  TALLY_WEBHOOK_CLAIM_TTL: '1s',
  TALLY_WEBHOOK_CONCURRENCY: '2',
  TALLY_WEBHOOK_CONCURRENCY_PER_DESTINATION: '2',
})

const requestIdOf = (body: Buffer) => JSON.parse(body.toString()).metadata.requestId as string

describe('delivery claims', () => {
  it('send every delivery exactly once when the receiver is slower than the lease and the slots are few', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(hook.path, () => ({ delayMs: 1_500 }))
    const events = Array.from({ length: 6 }, () => sampleEvent({ organization_id: org.organizationId }))
    await suite.tally.publisher.publish(events)
    await waitFor(
      async () =>
        (await deliveriesOf(suite.tally, org, hook.id)).filter((d) => d.status === 'delivered').length === 6,
      { what: 'all 6 delivered', timeoutMs: 20_000 },
    )
    const received = suite.receiver.to(hook.path).map((r) => requestIdOf(r.body))
    expect(received.sort()).toEqual(events.map((e) => e.request_id).sort())
    const rows = await suite.tally.sql<{ attempts: number; n: number }[]>`
      select d.attempts, (select count(*)::int from webhook_delivery_attempts a where a.delivery_id = d.id) as n
      from webhook_deliveries d where d.webhook_id = ${hook.id}`
    expect(rows).toHaveLength(6)
    expect(rows.every((r) => r.attempts === 1 && r.n === 1)).toBe(true)
  }, 30_000)

  it('write an outcome only under the claim it was made under, and never over a final one', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, 'https://hooks.example.com')
    const repo = createDeliveryRepo(suite.tally.sql)
    const delivery = await insertClaimed(repo, hook.id)
    const { id } = delivery
    const result = { durationMs: 1, responseBody: null, retryAfterMs: null }
    const delivered = { ...result, ok: true, status: 200, error: null }
    const failed = { ...result, ok: false, status: 500, error: 'receiver answered 500' }
    const attemptedAt = new Date()
    const state = async () =>
      (
        await suite.tally.sql<{ status: string; attempts: number }[]>`
          select status, attempts from webhook_deliveries where id = ${id}`
      )[0]

    // Another claim's outcome (a process whose lease ran out) is not written.
    await repo.complete([
      {
        delivery: { ...delivery, claimToken: randomUUID() },
        attemptedAt,
        result: failed,
        next: { status: 'pending', delayMs: 1_000 },
      },
    ])
    expect(await state()).toEqual({ status: 'pending', attempts: 0 })
    await repo.complete([{ delivery, attemptedAt, result: delivered, next: { status: 'delivered' } }])
    expect(await state()).toEqual({ status: 'delivered', attempts: 1 })
    // A late outcome under the same claim never sets it back to pending nor counts twice.
    await repo.complete([
      { delivery, attemptedAt, result: failed, next: { status: 'pending', delayMs: 1_000 } },
    ])
    expect(await state()).toEqual({ status: 'delivered', attempts: 1 })
  })

  it("write only the current claim's outcome when an older claim's arrives in the same batch", async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, 'https://hooks.example.com')
    const repo = createDeliveryRepo(suite.tally.sql)
    // The claim is handed back and taken again under a new token (a lease that ran out).
    const first = await insertClaimed(repo, hook.id)
    const { id } = first
    await repo.release([first])
    const {
      claimed: [current],
    } = await repo.claimDue(1_000, 60_000)
    expect(current?.id).toBe(id)
    const attemptedAt = new Date()
    const result = { durationMs: 1, responseBody: null, retryAfterMs: null }
    // Both outcomes written together, the older one on either side.
    for (const order of [0, 1]) {
      const stale = {
        delivery: first,
        attemptedAt,
        result: { ...result, ok: false, status: 500, error: 'stale' },
        next: { status: 'pending' as const, delayMs: 1_000 },
      }
      const fresh = {
        delivery: current as ClaimedDelivery,
        attemptedAt,
        result: { ...result, ok: true, status: 200, error: null },
        next: { status: 'delivered' as const },
      }
      if (order === 1) {
        await suite.tally.sql`
          update webhook_deliveries set status = 'pending', attempts = 0, round_attempts = 0,
            claim_token = ${current?.claimToken as string}, last_error = null
          where id = ${id}`
        await suite.tally.sql`delete from webhook_delivery_attempts where delivery_id = ${id}`
      }
      await repo.complete(order === 0 ? [stale, fresh] : [fresh, stale])
      const [row] = await suite.tally.sql<{ status: string; attempts: number; last_error: string | null }[]>`
        select status, attempts, last_error from webhook_deliveries where id = ${id}`
      expect(row).toEqual({ status: 'delivered', attempts: 1, last_error: null })
      const attempts = await suite.tally.sql<{ error: string | null }[]>`
        select error from webhook_delivery_attempts where delivery_id = ${id}`
      expect(attempts).toEqual([{ error: null }])
    }
  })

  it('finish disabling a webhook after a 410 before stop() returns', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    suite.receiver.on(hook.path, () => ({ status: 410 }))
    const { sql } = suite.tally
    // Disabling this webhook takes a while, so that stop() would return first if it did not wait.
    await sql.unsafe(`
      create table if not exists test_slow_webhooks (webhook_id uuid primary key);
      create or replace function test_slow_webhook_updates() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from test_slow_webhooks s where s.webhook_id = new.id) then
          perform pg_sleep(0.5);
        end if;
        return new;
      end $$;
      create or replace trigger test_slow_webhook_updates before update on webhooks
        for each row execute function test_slow_webhook_updates();`)
    await sql`insert into test_slow_webhooks values (${hook.id})`
    const parts = await workerParts(suite)
    const worker = parts.worker()
    try {
      worker.enqueue([await insertClaimed(parts.repo, hook.id)], true)
      await waitFor(() => suite.receiver.to(hook.path).length === 1, { what: 'the attempt to be answered' })
      await worker.stop()
      const [webhook] = await sql<{ state: string }[]>`select state from webhooks where id = ${hook.id}`
      expect(webhook?.state).toBe('disabled')
    } finally {
      await sql`delete from test_slow_webhooks where webhook_id = ${hook.id}`
      await parts.close()
    }
  })

  it('keep trying to write outcomes while stopping, so a failing write loses nothing', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const { sql } = suite.tally
    // Postgres refuses this webhook's outcome writes while it is listed.
    const failures = await outcomeWriteFailures(sql)
    const refusedBefore = await failures.refused()
    const parts = await workerParts(suite)
    const worker = parts.worker({ pollMs: 50 })
    try {
      const delivery = await insertClaimed(parts.repo, hook.id, Buffer.from('{"metadata":{"requestId":"x"}}'))
      let answer: () => void = () => {}
      const answered = new Promise<void>((resolve) => {
        answer = resolve
      })
      suite.receiver.on(hook.path, () => ({ after: answered }))
      worker.enqueue([delivery], true)
      await waitFor(() => suite.receiver.to(hook.path).length === 1, {
        what: 'the attempt to be on the wire',
      })

      await failures.fail(hook.id)
      const stopped = worker.stop()
      answer()
      await waitFor(async () => (await failures.refused()) > refusedBefore, {
        what: 'an outcome write to be refused',
      })
      await failures.recover(hook.id)
      await stopped

      const [row] = await sql<{ status: string; attempts: number }[]>`
        select status, attempts from webhook_deliveries where id = ${delivery.id}`
      expect(row).toEqual({ status: 'delivered', attempts: 1 })
      expect(suite.receiver.to(hook.path)).toHaveLength(1)
    } finally {
      await failures.recover(hook.id)
      await parts.close()
    }
  }, 20_000)

  it('fail every pending delivery of a webhook it disables, claimed ones included', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, 'https://hooks.example.com')
    const repo = createDeliveryRepo(suite.tally.sql)
    await repo.insert(
      Array.from({ length: 3 }, (_, i) => ({
        webhookId: hook.id,
        requestId: randomUUID(),
        event: 'request.completed' as const,
        body: Buffer.from('{}'),
        claimed: i > 0, // one due, two held under a claim
      })),
      60_000,
    )
    await repo.disable(hook.id, 'receiver answered 410 Gone')
    const rows = await suite.tally.sql<{ status: string; claim_token: string | null; last_error: string }[]>`
      select status, claim_token, last_error from webhook_deliveries where webhook_id = ${hook.id}`
    expect(rows).toHaveLength(3)
    for (const row of rows)
      expect(row).toEqual({
        status: 'failed',
        claim_token: null,
        last_error: 'webhook disabled: receiver answered 410 Gone',
      })
    const [webhook] = await suite.tally.sql<
      { state: string }[]
    >`select state from webhooks where id = ${hook.id}`
    expect(webhook?.state).toBe('disabled')
  })
})
