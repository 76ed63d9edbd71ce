import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import type { Config } from '../shared/config.ts'
import { createDeletedOrganizations } from '../shared/deleted-organizations.ts'
import type { EventHandler } from '../shared/events/handler.ts'
import type { Logger } from '../shared/logger.ts'
import type { Sql } from '../shared/postgres.ts'
import { createDeliveryRepo } from '../shared/webhooks/deliveries.ts'
import { createWebhookDirectory } from '../shared/webhooks/directory.ts'
import { createSender } from '../shared/webhooks/sender.ts'
import { createDispatchHandler } from './handler.ts'
import { createScoredRequests } from './scored-requests.ts'
import { createDeliveryWorker } from './worker.ts'

export interface Dispatcher {
  /** Records deliveries for a batch of events (consumer group tally-dispatcher). */
  handler: EventHandler
  /** Stops claiming, lets attempts in flight end and records them. */
  stop(): Promise<void>
}

/**
 * The dispatcher role: the event handler and the delivery worker, over one webhook cache.
 * `clickhouse` reads the requests that score events are about (docs/webhooks.md); without it a
 * scored request reads as not stored yet.
 */
export async function startDispatcher(
  config: Config,
  sql: Sql,
  log: Logger,
  clickhouse?: ClickHouseClient,
): Promise<Dispatcher> {
  const directory = await createWebhookDirectory(sql, log)
  const deletions = await createDeletedOrganizations(sql, log)
  const repo = createDeliveryRepo(sql)
  const sender = createSender({
    allowPrivateNetworks: config.TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    connectionsPerDestination: config.TALLY_WEBHOOK_CONCURRENCY_PER_DESTINATION,
    caFile: config.TALLY_WEBHOOK_CA_FILE,
  })
  const leaseMs = config.TALLY_WEBHOOK_CLAIM_TTL
  const worker = createDeliveryWorker({
    repo,
    directory,
    sender,
    log,
    schedule: config.TALLY_WEBHOOK_RETRY_SCHEDULE,
    leaseMs,
    maxInFlight: config.TALLY_WEBHOOK_CONCURRENCY,
    perDestination: config.TALLY_WEBHOOK_CONCURRENCY_PER_DESTINATION,
    maxHeldBytes: config.TALLY_WEBHOOK_HELD_BYTES,
  })
  const handler = createDispatchHandler({
    directory,
    deletions,
    repo,
    worker,
    leaseMs,
    log,
    ...(clickhouse ? { scoredRequests: createScoredRequests(clickhouse) } : {}),
  })
  log.info(
    {
      schedule: config.TALLY_WEBHOOK_RETRY_SCHEDULE.length,
      privateNetworks: config.TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      scoredRequests: clickhouse !== undefined,
    },
    'dispatcher_started',
  )
  return {
    handler,
    async stop() {
      await worker.stop()
      await sender.close()
      await directory.close()
      await deletions.close()
    },
  }
}
