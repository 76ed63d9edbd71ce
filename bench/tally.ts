import { createApiKeyRepo } from '../services/api/keys/repo.ts'
import { type Config, loadConfig } from '../services/shared/config.ts'
import type { Engines } from '../services/shared/engines.ts'
import { createLogger } from '../services/shared/logger.ts'
import { createShutdown, type Shutdown } from '../services/shared/shutdown.ts'
import { ALL_ROLES, type Roles, startTally } from '../services/standalone/compose.ts'

export interface BenchTally {
  config: Config
  url: string
  /** An admin key of the organization made for the bench. */
  key: string
  organizationId: string
  engines: Engines
  shutdown: Shutdown
}

/** Per-organization limits no bench reaches (a bench measuring the limits sets its own). */
export const UNLIMITED = {
  TALLY_RATE_LIMIT_PER_MINUTE: '100000000',
  TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: '100000000000',
  TALLY_RATE_LIMIT_BYTES_PER_MINUTE: '100000000000000',
}

/**
 * The roles `roles` of Tally as `npm start` composes them (embedded engines but DATABASE_URL when
 * set), on loopback, with a rate limit no bench reaches. What started stops again if a step fails.
 */
export async function startBenchRoles(name: string, env: Record<string, string>, roles: Roles) {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    TALLY_LOG_LEVEL: 'warn',
    // The bench sends far more than an organization's default allowance: requests, events, bytes.
    ...UNLIMITED,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...env,
  })
  const log = createLogger(config, name)
  const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
  try {
    return { config, shutdown, started: await startTally(config, log, shutdown, roles) }
  } catch (err) {
    // What started before the failure (embedded Postgres, the ClickHouse server) stops with it.
    await shutdown.run('bench start failed')
    throw err
  }
}

/**
 * Tally as `npm start` composes it (every role unless `roles` names some) by startBenchRoles, and
 * one organization named `name`.
 */
export async function startBenchTally(
  name: string,
  env: Record<string, string>,
  roles: Roles = ALL_ROLES,
): Promise<BenchTally> {
  const { config, shutdown, started } = await startBenchRoles(name, env, roles)
  try {
    const sql = started.engines.postgres?.sql
    if (!started.url || !sql) throw new Error('tally did not start its API')
    const { organization, secret } = await createApiKeyRepo(sql).createOrganization(name)
    return {
      config,
      url: started.url,
      key: secret,
      organizationId: organization.id,
      engines: started.engines,
      shutdown,
    }
  } catch (err) {
    await shutdown.run('bench start failed')
    throw err
  }
}
