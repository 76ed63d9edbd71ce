import { openClickHouse } from '../shared/clickhouse/client.ts'
import type { Config } from '../shared/config.ts'
import { clickHouseStartUp, type Engines } from '../shared/engines.ts'
import type { Logger } from '../shared/logger.ts'
import { type ConsumerRole, needed } from '../shared/process/role.ts'
import type { Shutdown } from '../shared/shutdown.ts'
import { startDispatcher } from './dispatcher.ts'

/**
 * Where the dispatcher reads the requests scores are about: the process's ClickHouse when another
 * role opened it, else a client of CLICKHOUSE_URL (reads only: the roles that write migrate). A
 * dispatcher process of its own on the embedded engines has none (docs/webhooks.md).
 */
async function scoredRequestsSource(config: Config, engines: Engines, log: Logger, shutdown: Shutdown) {
  if (engines.clickhouse) return engines.clickhouse.client
  if (!config.CLICKHOUSE_URL) return undefined
  const ch = await clickHouseStartUp(config, log)('connect', () => openClickHouse(config, log))
  shutdown.add('clickhouse', () => ch.close())
  return ch.client
}

/** Request and score events into webhook deliveries, and the worker that sends them. */
export const dispatcherRole: ConsumerRole = {
  group: 'tally-dispatcher',
  deadLettersUndecodable: false,
  needs: { postgres: true },
  async start({ config, engines, log, shutdown }) {
    const dispatcher = await startDispatcher(
      config,
      needed(engines.postgres, 'postgres', 'dispatcher').sql,
      log,
      await scoredRequestsSource(config, engines, log, shutdown),
    )
    shutdown.add('dispatcher', () => dispatcher.stop())
    return dispatcher.handler
  },
}
