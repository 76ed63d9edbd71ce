import type { FastifyInstance } from 'fastify'
import { buildApp } from '../api/app.ts'
import type { ReadinessCheck } from '../api/health/routes.ts'
import { bootstrapFirstOrganization } from '../api/keys/bootstrap.ts'
import { startDispatcher } from '../dispatcher/dispatcher.ts'
import { createIngestHandler } from '../ingest/handler.ts'
import { type Config, ConfigError, publicUrl } from '../shared/config.ts'
import { type Engines, openEngines } from '../shared/engines.ts'
import { loadRequestEventCodec } from '../shared/events/codec.ts'
import { createKafka, createKafkaPublisher, ensureTopics, runKafkaConsumer } from '../shared/events/kafka.ts'
import {
  createInProcessPublisher,
  type EventHandler,
  type EventPublisher,
} from '../shared/events/transport.ts'
import type { Logger } from '../shared/logger.ts'
import { startMetricsServer } from '../shared/metrics-server.ts'
import { openRateLimiter } from '../shared/rate-limit.ts'
import type { Shutdown } from '../shared/shutdown.ts'

export interface Roles {
  api: boolean
  ingest: boolean
  dispatcher: boolean
}

export interface Started {
  engines: Engines
  publisher?: EventPublisher
  app?: FastifyInstance
  url?: string
  /** Set on the very first start only: the first organization's admin key, to show once. */
  bootstrap?: { secret: string; generated: boolean } | null
}

/**
 * The composition root of every Tally process: opens the engines the roles need, wires the
 * event handlers to Kafka (when KAFKA_BROKERS is set) or in-process, and starts the API.
 * Shutdown steps are registered in start order, so they run: API, publisher, consumers, engines.
 */
export async function startTally(
  config: Config,
  log: Logger,
  shutdown: Shutdown,
  roles: Roles,
): Promise<Started> {
  const inProcess = !config.KAFKA_BROKERS
  if (inProcess && !(roles.api && roles.ingest && roles.dispatcher)) {
    throw new ConfigError(
      'KAFKA_BROKERS is required when the api, ingest and dispatcher run as separate processes; `npm start` runs them together without Kafka',
    )
  }
  // With PORT=0 the API's address is known only once it listens; links made before then are not.
  let baseUrl = publicUrl(config)
  const engines = await openEngines(
    config,
    log,
    shutdown,
    { postgres: roles.api || roles.dispatcher, clickhouse: roles.api || roles.ingest, blobs: roles.api },
    () => baseUrl,
  )
  const codec = await loadRequestEventCodec()
  const readiness: ReadinessCheck[] = []
  if (engines.postgres) {
    const { sql } = engines.postgres
    readiness.push({ name: 'postgres', check: () => sql`select 1` })
  }
  if (engines.clickhouse) {
    const { client } = engines.clickhouse
    readiness.push({
      name: 'clickhouse',
      check: async () => {
        const r = await client.ping()
        if (!r.success) throw r.error
      },
    })
  }
  if (engines.blobs)
    readiness.push({
      name: `blobs (${engines.blobs.kind})`,
      check: () => (engines.blobs as { ping(): Promise<void> }).ping(),
    })

  const handlers: { ingest?: EventHandler; dispatcher?: EventHandler } = {}
  if (roles.ingest && engines.clickhouse)
    handlers.ingest = createIngestHandler(engines.clickhouse.client, log)
  if (roles.dispatcher && engines.postgres) {
    const dispatcher = await startDispatcher(config, engines.postgres.sql, log)
    shutdown.add('dispatcher', () => dispatcher.stop())
    handlers.dispatcher = dispatcher.handler
  }

  let publisher: EventPublisher | undefined
  if (inProcess) {
    publisher = createInProcessPublisher(codec, Object.values(handlers))
    shutdown.add('publisher', () => (publisher as EventPublisher).close())
  } else {
    const kafka = createKafka(config, log)
    await ensureTopics(kafka, config)
    readiness.push({
      name: 'kafka',
      check: async () => {
        const admin = kafka.admin()
        await admin.connect()
        try {
          await admin.describeCluster()
        } finally {
          await admin.disconnect()
        }
      },
    })
    const consumers = [
      ['tally-ingest', handlers.ingest] as const,
      ['tally-dispatcher', handlers.dispatcher] as const,
    ]
    for (const [groupId, handler] of consumers) {
      if (!handler) continue
      const consumer = await runKafkaConsumer({
        kafka,
        groupId: `${config.TALLY_CONSUMER_GROUP_PREFIX}${groupId}`,
        topic: config.TALLY_REQUEST_TOPIC,
        dlqTopic: config.TALLY_DLQ_TOPIC,
        codec,
        handler,
        log: log.child({ consumer: groupId }),
        chunkSize: config.TALLY_INGEST_CHUNK_SIZE,
      })
      shutdown.add(`consumer ${groupId}`, () => consumer.stop())
    }
    if (roles.api) {
      publisher = await createKafkaPublisher(kafka, config.TALLY_REQUEST_TOPIC, codec, {
        lingerMs: config.TALLY_PRODUCER_LINGER_MS,
      })
      shutdown.add('publisher', () => (publisher as EventPublisher).close())
    }
  }

  if (!roles.api && config.TALLY_METRICS_PORT !== undefined) {
    const metrics = await startMetricsServer(config.TALLY_METRICS_PORT, config.HOST)
    shutdown.add('metrics', () => metrics.close())
  }
  if (!roles.api || !engines.postgres || !engines.clickhouse || !engines.blobs || !publisher)
    return { engines }
  const bootstrap = await bootstrapFirstOrganization(engines.postgres.sql, config.TALLY_BOOTSTRAP_API_KEY)
  const rateLimiter = openRateLimiter(config, log)
  shutdown.add('rate limiter', () => rateLimiter.close())
  const app = await buildApp({
    config,
    log,
    sql: engines.postgres.sql,
    clickhouse: engines.clickhouse.client,
    blobs: engines.blobs,
    publisher,
    rateLimiter,
    readiness,
  })
  await app.listen({ port: config.PORT, host: config.HOST })
  shutdown.add('api', () => app.close())
  baseUrl = publicUrl({ ...config, PORT: listeningPort(app) ?? config.PORT })
  return { engines, publisher, app, url: baseUrl, bootstrap }
}

function listeningPort(app: FastifyInstance): number | undefined {
  const address = app.server.address()
  return address && typeof address === 'object' ? address.port : undefined
}
