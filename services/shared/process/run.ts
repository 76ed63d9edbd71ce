import { type Config, ConfigError, loadConfig } from '../config.ts'
import { createLogger } from '../logger.ts'
import { createShutdown } from '../shutdown.ts'
import type { ProcessRoles } from './role.ts'
import { type Started, startRoles } from './start.ts'

/** Runs one Tally process with its roles until SIGTERM/SIGINT; exits 2 on bad config, 1 on failure. */
export async function runProcess<Out>(
  name: string,
  roles: ProcessRoles<Out>,
  onReady?: (started: Started<Out>) => void,
): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
  } catch (err) {
    console.error((err as Error).message)
    process.exit(2)
  }
  const log = createLogger(config, name)
  const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
  shutdown.onSignals()
  try {
    const started = await startRoles(config, log, shutdown, roles)
    // The embedded ClickHouse server gone (its owner stopped, or it died): fail loudly, so that
    // a supervisor restarts this process, which then starts or attaches to a server again.
    started.engines.clickhouse?.embedded?.onLost(() => {
      log.fatal('embedded ClickHouse server is gone; exiting')
      void shutdown.run('clickhouse server gone').finally(() => process.exit(1))
    })
    log.info({ url: started.served?.url }, 'process_ready')
    onReady?.(started)
  } catch (err) {
    if (err instanceof ConfigError) console.error(err.message)
    else log.fatal({ err }, 'start_failed')
    await shutdown.run('start failed')
    process.exit(err instanceof ConfigError ? 2 : 1)
  }
}
