import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createDeliveryRepo } from '../../services/dispatcher/deliveries.ts'
import { createWebhookDirectory } from '../../services/dispatcher/directory.ts'
import { createSender } from '../../services/dispatcher/sender.ts'
import { createDeliveryWorker } from '../../services/dispatcher/worker.ts'
import { createLogger } from '../../services/shared/logger.ts'
import { engines } from '../support/harness.ts'
import { createWebhook, deliveriesOf } from './support/api.ts'
import { until } from './support/receiver.ts'
import { webhookSuite } from './support/suite.ts'

// Tally without its dispatcher: the worker under test is the only one claiming.
const suite = webhookSuite({}, { api: true, ingest: false, dispatcher: false })

const requestIdOf = (body: Buffer) => JSON.parse(body.toString()).metadata.requestId as string

describe.skipIf(!engines().kafkaBrokers)('delivery worker back-pressure', () => {
  it('claim no more than it can hold while outcomes cannot be written, then deliver the rest once each', async () => {
    const org = await suite.tally.newOrg()
    const hook = await createWebhook(suite.tally, org, suite.receiver.url)
    const { sql } = suite.tally
    // Postgres refuses outcome writes (an update that counts an attempt) for listed webhooks;
    // claims still go through. The sequence counts refusals.
    await sql.unsafe(`
      create table if not exists test_failing_outcomes (webhook_id uuid primary key);
      create sequence if not exists test_refused_outcomes;
      create or replace function test_refuse_outcomes() returns trigger language plpgsql as $$
      begin
        if new.attempts > old.attempts
           and exists (select 1 from test_failing_outcomes f where f.webhook_id = new.webhook_id) then
          perform nextval('test_refused_outcomes');
          raise exception 'outcome writes are failing';
        end if;
        return new;
      end $$;
      create or replace trigger test_refuse_outcomes before update on webhook_deliveries
        for each row execute function test_refuse_outcomes();`)
    const refused = async () =>
      (
        await sql<{ n: string }[]>`
          select (case when is_called then last_value else 0 end)::text as n from test_refused_outcomes`
      ).map((r) => Number(r.n))[0] ?? 0
    await sql`insert into test_failing_outcomes values (${hook.id})`
    const refusedBefore = await refused()

    const log = createLogger({ TALLY_LOG_LEVEL: 'silent' }, 'test-worker')
    const repo = createDeliveryRepo(sql)
    const directory = await createWebhookDirectory(sql, log)
    const sender = createSender({
      allowPrivateNetworks: true,
      connectionsPerDestination: 2,
      caFile: suite.certs.caFile,
    })
    // Due before the worker starts: its poller claims them at once, then sleeps for a minute unless
    // woken, so everything after the first claim depends on being woken when room frees.
    const requestIds = Array.from({ length: 20 }, () => randomUUID())
    await repo.insert(
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
    const worker = createDeliveryWorker({
      repo,
      directory,
      sender,
      log,
      schedule: [100],
      leaseMs: 60_000,
      pollMs: 60_000,
      maxInFlight: 2,
      maxHeld,
    })
    try {
      // Several refused writes (100, 200, 400 ms apart): each attempt's end was a chance to claim more.
      await until(async () => (await refused()) >= refusedBefore + 3, 'three refused outcome writes', 10_000)
      const [claimed] = await sql<{ n: number }[]>`
        select count(*)::int as n from webhook_deliveries where webhook_id = ${hook.id} and claim_token is not null`
      // Due retries get half of what a process holds.
      expect(claimed?.n).toBeLessThanOrEqual(maxHeld / 2)
      expect(suite.receiver.to(hook.path).length).toBeLessThanOrEqual(maxHeld / 2)

      await sql`delete from test_failing_outcomes where webhook_id = ${hook.id}`
      await until(
        async () =>
          (await deliveriesOf(suite.tally, org, hook.id, '?limit=100')).filter(
            (d) => d.status === 'delivered',
          ).length === 20,
        'all 20 delivered',
        10_000,
      )
      const received = suite.receiver.to(hook.path).map((r) => requestIdOf(r.body))
      expect(received.sort()).toEqual([...requestIds].sort())
    } finally {
      await sql`delete from test_failing_outcomes where webhook_id = ${hook.id}`
      await worker.stop()
      await sender.close()
      await directory.close()
    }
  }, 30_000)
})
