import { type Config, ConfigError, loadConfig } from '../config.ts'
import type { Engines } from '../engines.ts'
import { createLogger, type Logger } from '../logger.ts'
import { createShutdown, type Shutdown } from '../shutdown.ts'
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
    exitWhenEmbeddedEngineEnds(started.engines, log, shutdown)
    log.info({ url: started.served?.url }, 'process_ready')
    onReady?.(started)
  } catch (err) {
    if (err instanceof ConfigError) console.error(err.message)
    else log.fatal({ err }, 'start_failed')
    await shutdown.run('start failed')
    process.exit(err instanceof ConfigError ? 2 : 1)
  }
}

/**
 * An embedded engine that ends under the running process (it died, was killed, or the process that
 * owns it stopped it) ends the process too: a fatal log naming the engine, the ordered shutdown,
 * exit 1. Nothing else would start the engine again, and a process left answering 503 still
 * answers /livez, so no supervisor would restart it; restarted, it starts the engine again or
 * attaches to it. Engines at DATABASE_URL and CLICKHOUSE_URL have supervisors of their own: for
 * those Tally answers 503 and reconnects (docs/operations.md).
 */
function exitWhenEmbeddedEngineEnds(engines: Engines, log: Logger, shutdown: Shutdown): void {
  const lost = (engine: 'postgres' | 'clickhouse', name: string) => () => {
    // Stopping already (a SIGTERM to the whole process group reaches the engines too): expected.
    if (shutdown.started()) return
    log.fatal({ engine }, `embedded_engine_lost: the embedded ${name} ended under this process; exiting`)
    void shutdown.run(`embedded ${name} ended`).finally(() => process.exit(1))
  }
  engines.postgres?.embedded?.onLost(lost('postgres', 'Postgres'))
  engines.clickhouse?.embedded?.onLost(lost('clickhouse', 'ClickHouse server'))
}
