import type { Config } from '../config.ts'
import type { Engines } from '../engines.ts'
import type { EventHandler } from '../events/handler.ts'
import type { EventPublisher } from '../events/transport.ts'
import type { Logger } from '../logger.ts'
import type { Shutdown } from '../shutdown.ts'

/** The engines a role uses; a process opens the union of its roles' needs. */
export interface EngineNeeds {
  postgres?: boolean
  clickhouse?: boolean
  blobs?: boolean
}

interface RoleContext {
  config: Config
  log: Logger
  /** A role registers its own closing here; steps run in reverse order of registration. */
  shutdown: Shutdown
  engines: Engines
}

/** A role that records the request events: ingest (ClickHouse), dispatcher (webhook deliveries). */
export interface ConsumerRole {
  /** Its Kafka consumer group (prefixed by TALLY_CONSUMER_GROUP_PREFIX). */
  readonly group: string
  /** Whether this group dead-letters undecodable messages (exactly one group does, so each has one letter). */
  readonly deadLettersUndecodable: boolean
  /**
   * Whether its consumer writes at most once every TALLY_INGEST_LINGER_MS, a chunk short of full
   * waiting for more: the ingest's, since ClickHouse spends far less per row on few large inserts
   * than on many small ones; not the dispatcher's, whose deliveries should not wait.
   */
  readonly lingers?: boolean
  readonly needs: EngineNeeds
  start(ctx: RoleContext): Promise<EventHandler>
}

/** Something a serving role's `/readyz` asks: one engine answering. */
export interface ReadinessCheck {
  name: string
  check(): Promise<unknown>
}

interface ServingContext extends RoleContext {
  /** Hands request events to the consumers: through Kafka, or in-process. */
  publisher: EventPublisher
  /** One check per engine the process uses, Kafka included. */
  readiness: ReadinessCheck[]
  /** The address links are made from, once known (with PORT=0, only after listening). */
  setPublicUrl(url: string): void
}

/** The role that takes requests and publishes their events: the API. `Out` is what it reports. */
export interface ServingRole<Out> {
  readonly needs: EngineNeeds
  start(ctx: ServingContext): Promise<Out & { url: string }>
}

/**
 * A role that takes its work from Postgres rather than the event topic: the exporter. It runs
 * alone without Kafka, and registers its own stopping.
 */
export interface WorkerRole {
  /** Names it in errors and logs. */
  readonly name: string
  readonly needs: EngineNeeds
  start(ctx: RoleContext): Promise<void>
}

/** The roles one process runs: at most one serving role, any consumer and worker roles. */
export interface ProcessRoles<Out> {
  serving?: ServingRole<Out>
  consumers: readonly ConsumerRole[]
  workers?: readonly WorkerRole[]
}

/** Assert that the process opened an engine a role declared it needs. */
export function needed<T>(engine: T | undefined, name: string, role: string): T {
  if (engine === undefined) throw new Error(`the ${role} role needs ${name}, which this process did not open`)
  return engine
}
