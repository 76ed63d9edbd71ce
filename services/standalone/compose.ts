import { type ApiStarted, apiRole } from '../api/role.ts'
import { dispatcherRole } from '../dispatcher/role.ts'
import { exporterRole } from '../exporter/role.ts'
import { ingestRole } from '../ingest/role.ts'
import type { Config } from '../shared/config.ts'
import type { Engines } from '../shared/engines.ts'
import type { EventPublisher } from '../shared/events/transport.ts'
import type { Logger } from '../shared/logger.ts'
import type { ProcessRoles } from '../shared/process/role.ts'
import { startRoles } from '../shared/process/start.ts'
import type { Shutdown } from '../shared/shutdown.ts'

/** Which of Tally's roles a process runs. */
export interface Roles {
  api: boolean
  ingest: boolean
  dispatcher: boolean
  exporter: boolean
}

export const ALL_ROLES: Roles = { api: true, ingest: true, dispatcher: true, exporter: true }

/** The role modules of a selection: the one place that knows every role. */
export function selectRoles(roles: Roles): ProcessRoles<ApiStarted> {
  return {
    ...(roles.api ? { serving: apiRole } : {}),
    consumers: [...(roles.ingest ? [ingestRole] : []), ...(roles.dispatcher ? [dispatcherRole] : [])],
    workers: roles.exporter ? [exporterRole] : [],
  }
}

export interface Started extends Partial<ApiStarted> {
  engines: Engines
  publisher?: EventPublisher
}

/** Starts the selected roles in this process (`npm start`, the test harness, the benches). */
export async function startTally(
  config: Config,
  log: Logger,
  shutdown: Shutdown,
  roles: Roles,
): Promise<Started> {
  const { engines, publisher, served } = await startRoles(config, log, shutdown, selectRoles(roles))
  return { engines, ...(publisher ? { publisher } : {}), ...served }
}
