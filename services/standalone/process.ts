import { ConfigError, loadConfig } from '../shared/config.ts'
import { createLogger } from '../shared/logger.ts'
import { createShutdown } from '../shared/shutdown.ts'
import { type Roles, type Started, startTally } from './compose.ts'

/** Starts one distributed Tally process with its roles; exits 2 on bad config, 1 on failure. */
export async function runProcess(
  name: string,
  roles: Roles,
  onReady?: (started: Started) => void,
): Promise<void> {
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig()
  } catch (err) {
    console.error((err as Error).message)
    process.exit(2)
  }
  const log = createLogger(config, name)
  const shutdown = createShutdown(log)
  shutdown.onSignals()
  try {
    const started = await startTally(config, log, shutdown, roles)
    log.info({ url: started.url }, 'process_ready')
    onReady?.(started)
  } catch (err) {
    if (err instanceof ConfigError) console.error(err.message)
    else log.fatal({ err }, 'start_failed')
    await shutdown.run('start failed')
    process.exit(err instanceof ConfigError ? 2 : 1)
  }
}
