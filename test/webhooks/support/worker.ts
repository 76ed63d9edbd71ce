import { randomUUID } from 'node:crypto'
import { createDeliveryWorker, type WorkerOptions } from '../../../services/dispatcher/worker.ts'
import { createLogger } from '../../../services/shared/logger.ts'
import type { Sql } from '../../../services/shared/postgres.ts'
import {
  type ClaimedDelivery,
  createDeliveryRepo,
  type DeliveryRepo,
} from '../../../services/shared/webhooks/deliveries.ts'
import { createWebhookDirectory, type WebhookDirectory } from '../../../services/shared/webhooks/directory.ts'
import { createSender, type Sender } from '../../../services/shared/webhooks/sender.ts'
import type { WebhookSuite } from './suite.ts'

export interface WorkerParts {
  repo: DeliveryRepo
  directory: WebhookDirectory
  sender: Sender
  /** A delivery worker over these parts; `options` as createDeliveryWorker's (schedule [100], a 60 s lease unless given). */
  worker(options?: Partial<WorkerOptions>): ReturnType<typeof createDeliveryWorker>
  close(): Promise<void>
}

/** What a test needs to drive a delivery worker of its own against the suite's database and receiver. */
export async function workerParts(suite: WebhookSuite): Promise<WorkerParts> {
  const { sql } = suite.tally
  const log = createLogger({ TALLY_LOG_LEVEL: 'silent' }, 'test-worker')
  const repo = createDeliveryRepo(sql)
  const directory = await createWebhookDirectory(sql, log)
  const sender = createSender({
    allowPrivateNetworks: true,
    connectionsPerDestination: 2,
    caFile: suite.certs.caFile,
  })
  return {
    repo,
    directory,
    sender,
    worker: (options = {}) =>
      createDeliveryWorker({ repo, directory, sender, log, schedule: [100], leaseMs: 60_000, ...options }),
    async close() {
      await sender.close()
      await directory.close()
    },
  }
}

/** One delivery recorded for `webhookId` and claimed at once (a 60 s lease), as the event handler does. */
export async function insertClaimed(
  repo: DeliveryRepo,
  webhookId: string,
  body: Buffer = Buffer.from('{}'),
): Promise<ClaimedDelivery> {
  const requestId = randomUUID()
  const { ids, claimToken } = await repo.insert(
    [{ webhookId, requestId, event: 'request.completed', body, claimed: true }],
    60_000,
  )
  const id = ids.get(`${webhookId}:${requestId}`) as string
  return { id, webhookId, requestId, body, roundAttempts: 0, claimToken }
}

/**
 * Makes Postgres refuse outcome writes (an update that counts an attempt) of the webhooks listed
 * with `fail`; claims and lease renewals still go through. `refused()` counts refusals (a
 * sequence: it is not rolled back with the failing statement).
 */
export async function outcomeWriteFailures(sql: Sql) {
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
  return {
    fail: async (webhookId: string) => {
      await sql`insert into test_failing_outcomes values (${webhookId}) on conflict do nothing`
    },
    recover: async (webhookId: string) => {
      await sql`delete from test_failing_outcomes where webhook_id = ${webhookId}`
    },
    refused: async () =>
      (
        await sql<{ n: string }[]>`
          select (case when is_called then last_value else 0 end)::text as n from test_refused_outcomes`
      ).map((r) => Number(r.n))[0] ?? 0,
  }
}
