import { type Config, ConfigError, listeningUrl, publicUrl } from '../config.ts'
import { type Engines, openEngines } from '../engines.ts'
import { loadEventCodec } from '../events/codec.ts'
import type { EventHandler } from '../events/handler.ts'
import { createKafkaPublisher, ensureTopics, kafkaConnection, runKafkaConsumer } from '../events/kafka.ts'
import { withAdmin } from '../events/kafka-topics.ts'
import { createInProcessPublisher, type EventPublisher } from '../events/transport.ts'
import type { Logger } from '../logger.ts'
import { startHealthServer } from '../metrics-server.ts'
import type { Shutdown } from '../shutdown.ts'
import type { ConsumerRole, EngineNeeds, ProcessRoles, ReadinessCheck } from './role.ts'

/** The consumer groups of the event topic: without Kafka, one process must run them all. */
const CONSUMER_GROUPS = ['tally-ingest', 'tally-dispatcher']

export interface Started<Out> {
  engines: Engines
  publisher?: EventPublisher
  /** What the serving role reported once it listened. */
  served?: Out & { url: string }
}

/**
 * The composition root of every Tally process: opens the engines its roles need, starts the
 * consumer roles and the worker roles, wires the consumers' handlers to Kafka (when
 * KAFKA_BROKERS is set) or in-process, then starts the serving role with the publisher. Shutdown
 * steps are registered in start order, so they run: serving role, publisher, workers, consumers,
 * engines.
 */
export async function startRoles<Out>(
  config: Config,
  log: Logger,
  shutdown: Shutdown,
  roles: ProcessRoles<Out>,
): Promise<Started<Out>> {
  const { serving, consumers, workers = [] } = roles
  const inProcess = !config.KAFKA_BROKERS
  const groups = new Set(consumers.map((c) => c.group))
  // The event topic's roles; a process of worker roles alone (an exporter) needs no Kafka.
  const usesEvents = serving !== undefined || consumers.length > 0
  if (usesEvents && inProcess && !(serving && CONSUMER_GROUPS.every((g) => groups.has(g)))) {
    throw new ConfigError(
      'KAFKA_BROKERS is required when the api, ingest and dispatcher run as separate processes; `npm start` runs them together without Kafka',
    )
  }
  // With PORT=0 the API's address is known only once it listens; links made before then are not.
  let baseUrl = publicUrl(config)
  const needs: EngineNeeds = {}
  for (const role of [...consumers, ...workers, ...(serving ? [serving] : [])])
    for (const [engine, needed] of Object.entries(role.needs))
      if (needed) needs[engine as keyof EngineNeeds] = true
  const engines = await openEngines(config, log, shutdown, needs, () => baseUrl)
  const context = { config, log, shutdown, engines }
  const readiness = engineChecks(engines)

  const handlers: { role: ConsumerRole; handler: EventHandler }[] = []
  for (const role of consumers) handlers.push({ role, handler: await role.start(context) })
  for (const role of workers) await role.start(context)

  const codec = await loadEventCodec()
  let publisher: EventPublisher | undefined
  if (usesEvents && inProcess) {
    const inProcessPublisher = createInProcessPublisher(
      codec,
      handlers.map((h) => h.handler),
      {
        maxBytes: config.TALLY_PUBLISH_QUEUE_MAX_BYTES,
        maxBytesPerOrg: config.TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG,
      },
    )
    shutdown.add('publisher', () => inProcessPublisher.close())
    publisher = inProcessPublisher
  } else if (usesEvents) {
    const kafka = kafkaConnection(config, log.child({ component: 'kafka' }))
    await ensureTopics(kafka, config)
    readiness.push({
      name: 'kafka',
      check: () =>
        withAdmin(
          kafka,
          async (admin) =>
            void (await admin.metadata({ topics: [config.TALLY_REQUEST_TOPIC], forceUpdate: true })),
        ),
    })
    for (const { role, handler } of handlers) {
      const consumer = await runKafkaConsumer({
        kafka,
        groupId: `${config.TALLY_CONSUMER_GROUP_PREFIX}${role.group}`,
        topic: config.TALLY_REQUEST_TOPIC,
        dlqTopic: config.TALLY_DLQ_TOPIC,
        codec,
        handler,
        log: log.child({ consumer: role.group }),
        chunkSize: config.TALLY_INGEST_CHUNK_SIZE,
        chunkBytes: config.TALLY_INGEST_CHUNK_BYTES,
        sessionTimeoutMs: config.TALLY_KAFKA_SESSION_TIMEOUT,
        instanceId: config.TALLY_CONSUMER_INSTANCE_ID,
        stallTimeoutMs: config.TALLY_CONSUMER_STALL_TIMEOUT,
        deadLetterUndecodable: role.deadLettersUndecodable,
        lingerMs: role.lingers ? config.TALLY_INGEST_LINGER_MS : 0,
      })
      readiness.push(consumer.readiness)
      shutdown.add(`consumer ${role.group}`, () => consumer.stop())
    }
    if (serving) {
      const kafkaPublisher = await createKafkaPublisher(kafka, config.TALLY_REQUEST_TOPIC, codec, {
        lingerMs: config.TALLY_PRODUCER_LINGER_MS,
        maxQueuedBytes: config.TALLY_PUBLISH_QUEUE_MAX_BYTES,
        maxQueuedBytesPerOrg: config.TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG,
      })
      shutdown.add('publisher', () => kafkaPublisher.close())
      publisher = kafkaPublisher
    }
  }

  if (!serving || !publisher) {
    if (config.TALLY_METRICS_PORT !== undefined) {
      const health = await startHealthServer({
        port: config.TALLY_METRICS_PORT,
        host: config.HOST,
        checks: readiness,
        log,
      })
      shutdown.add('health port', () => health.close())
      // With TALLY_METRICS_PORT=0, the log is where the port it was given is found.
      log.info({ url: listeningUrl(config.HOST, health.port) }, 'health_server_listening')
    }
    return publisher ? { engines, publisher } : { engines }
  }
  const served = await serving.start({
    ...context,
    publisher,
    readiness,
    setPublicUrl: (url) => {
      baseUrl = url
    },
  })
  return { engines, publisher, served }
}

/** `/readyz` checks for the engines this process opened. */
function engineChecks(engines: Engines): ReadinessCheck[] {
  const checks: ReadinessCheck[] = []
  if (engines.postgres) {
    const { sql } = engines.postgres
    checks.push({ name: 'postgres', check: () => sql`select 1` })
  }
  if (engines.clickhouse) {
    const { client } = engines.clickhouse
    checks.push({
      name: 'clickhouse',
      check: async () => {
        const r = await client.ping()
        if (!r.success) throw r.error
      },
    })
  }
  const { blobs } = engines
  if (blobs) checks.push({ name: `blobs (${blobs.kind})`, check: () => blobs.ping() })
  return checks
}
