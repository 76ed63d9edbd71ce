import { randomUUID } from 'node:crypto'
import cors from '@fastify/cors'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import type { BlobStore } from '../shared/blobs/blob-store.ts'
import { isFilesystemStore } from '../shared/blobs/open.ts'
import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import { createFairShare } from '../shared/clickhouse/priority.ts'
import { queryLimits, sqlLimits } from '../shared/clickhouse/query-limits.ts'
import type { RetentionKeeper } from '../shared/clickhouse/retention.ts'
import { type Config, publicUrl } from '../shared/config.ts'
import type { EventPublisher } from '../shared/events/transport.ts'
import type { Logger } from '../shared/logger.ts'
import type { Sql } from '../shared/postgres.ts'
import type { ReadinessCheck } from '../shared/process/role.ts'
import type { Scratch } from '../shared/scratch.ts'
import { examples as adminExamples } from './admin/examples.ts'
import { adminRoutes } from './admin/routes.ts'
import { examples as analyticsExamples } from './analytics/examples.ts'
import { analyticsRoutes } from './analytics/routes.ts'
import { examples as blobExamples } from './blobs/examples.ts'
import { signedBlobRoutes } from './blobs/routes.ts'
import { examples as exportExamples } from './exports/examples.ts'
import { createExportRepo } from './exports/repo.ts'
import { exportRoutes } from './exports/routes.ts'
import { examples as healthExamples } from './health/examples.ts'
import { healthRoutes } from './health/routes.ts'
import { authHook } from './http/auth.ts'
import { createAuthFailureLimit } from './http/auth-failures.ts'
import { clientErrorHandler, frameworkErrors, installErrorHandling, MAX_PARAM_LENGTH } from './http/errors.ts'
import { installInputRules } from './http/inputs.ts'
import { trackRouteMethods } from './http/methods.ts'
import { installOpenApi } from './http/openapi.ts'
import { createQueryGate } from './http/query-gate.ts'
import { organizationLimits } from './http/rate-limit.ts'
import type { RateLimiter } from './http/rate-limiter.ts'
import { examples as keyExamples } from './keys/examples.ts'
import { createPrincipalCache } from './keys/principals.ts'
import { createApiKeyRepo } from './keys/repo.ts'
import { apiKeyRoutes } from './keys/routes.ts'
import { examples as metricsExamples } from './metrics/examples.ts'
import { recordHttpMetrics } from './metrics/http.ts'
import { metricsRoutes } from './metrics/routes.ts'
import { examples as otlpExamples } from './otlp/examples.ts'
import { otlpRoutes } from './otlp/routes.ts'
import { examples as promptExamples } from './prompts/examples.ts'
import { promptRoutes } from './prompts/routes.ts'
import { examples as requestExamples } from './requests/examples.ts'
import { requestRoutes, requestServices } from './requests/routes.ts'
import { examples as scoreExamples } from './scores/examples.ts'
import { scoreRoutes } from './scores/routes.ts'
import { createSessionDetailRepo } from './sessions/detail.ts'
import { examples as sessionExamples } from './sessions/examples.ts'
import { createSessionRepo } from './sessions/repo.ts'
import { sessionRoutes } from './sessions/routes.ts'
import type { SqlAccess } from './sql/engine-user.ts'
import { examples as sqlExamples } from './sql/examples.ts'
import { sqlRoutes } from './sql/routes.ts'
import { createSqlRunner } from './sql/runner.ts'
import { examples as webhookExamples } from './webhooks/examples.ts'
import { webhookDeliveries } from './webhooks/openapi.ts'
import { webhookRoutes } from './webhooks/routes.ts'

export interface AppDeps {
  config: Config
  log: Logger
  sql: Sql
  clickhouse: ClickHouseClient
  /** The checked ClickHouse user callers' SQL runs as (sql/engine-user.ts), or why /v1/sql answers 503. */
  sqlAccess: SqlAccess
  blobs: BlobStore
  publisher: EventPublisher
  rateLimiter: RateLimiter
  readiness: ReadinessCheck[]
  /**
   * This process's scratch folder under TALLY_DATA_DIR: a deletion sweeps the folders that
   * processes killed mid-export left beside it.
   */
  scratch: Scratch
  /** Keeps ClickHouse's retention what Postgres records; the admin API changes an organization's. */
  retention: RetentionKeeper
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/

/** Where callers reach this API (publicUrl), once it listens: with PORT=0 the port it was given. */
export function apiUrl(app: FastifyInstance, config: Config): string {
  const address = app.server.address()
  return publicUrl(config, address && typeof address === 'object' ? address.port : config.PORT)
}

/** The Tally API: every route, one error envelope, auth and rate limits on /v1, /v2 and /admin/v1. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({
      disableRequestLogging:
        deps.config.TALLY_LOG_LEVEL !== 'debug' && deps.config.TALLY_LOG_LEVEL !== 'trace',
    }),
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    },
    bodyLimit: 1024 * 1024,
    trustProxy: deps.config.TALLY_TRUST_PROXY,
    // Slow clients: a request must arrive whole in time, or it is answered 408 and its connection
    // closed. Node checks the deadlines every connectionsCheckingInterval.
    requestTimeout: deps.config.TALLY_HTTP_REQUEST_TIMEOUT,
    http: {
      headersTimeout: deps.config.TALLY_HTTP_HEADERS_TIMEOUT,
      connectionsCheckingInterval: 1_000,
      // A missing Host is refused in the envelope (errors.ts), not by Node with an empty 400.
      requireHostHeader: false,
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler: clientErrorHandler(deps.log, {
      headersMs: deps.config.TALLY_HTTP_HEADERS_TIMEOUT,
      requestMs: deps.config.TALLY_HTTP_REQUEST_TIMEOUT,
    }),
    // Requests arriving while the server closes are answered 503 in the envelope (errors.ts).
    return503OnClosing: false,
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.decorateRequest('principal', null)
  // Text without NUL or lone surrogates, finite numbers, JSON at most 100 levels deep: every route.
  installInputRules(app)
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  recordHttpMetrics(app)
  // A path that exists under other methods is a 405 with Allow, not a 404.
  installErrorHandling(app, trackRouteMethods(app))
  // Fastify parses text/plain by default; Tally takes JSON only, so other bodies are a 415.
  app.removeContentTypeParser('text/plain')
  // Browser apps on the origins named in TALLY_CORS_ORIGINS (none by default).
  if (deps.config.TALLY_CORS_ORIGINS.length > 0) {
    const allowed = new Set(deps.config.TALLY_CORS_ORIGINS)
    await app.register(cors, {
      // A function, not the list: with a list the plugin still sends other origins its
      // Access-Control-* headers (all but Allow-Origin). Another origin now gets none.
      origin: (origin, callback) =>
        callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      // X-Tally-Api-Key and Content-Encoding: what a browser's OTLP exporter sends to /v1/traces.
      allowedHeaders: [
        'Authorization',
        'Content-Type',
        'X-Request-Id',
        'X-Tally-Api-Key',
        'Content-Encoding',
      ],
      exposedHeaders: [
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'Retry-After',
        'X-Request-Id',
      ],
      maxAge: 600,
    })
  }
  await installOpenApi(app, () => apiUrl(app, deps.config), webhookDeliveries, {
    ...adminExamples,
    ...analyticsExamples,
    ...blobExamples,
    ...exportExamples,
    ...healthExamples,
    ...keyExamples,
    ...metricsExamples,
    ...otlpExamples,
    ...promptExamples,
    ...requestExamples,
    ...scoreExamples,
    ...sessionExamples,
    ...sqlExamples,
    ...webhookExamples,
  })

  await app.register(healthRoutes(deps.readiness, deps.log))
  await app.register(metricsRoutes())
  if (isFilesystemStore(deps.blobs)) await app.register(signedBlobRoutes(deps.blobs))

  const keys = createApiKeyRepo(deps.sql)
  const exports = createExportRepo(deps.sql)
  const failures = createAuthFailureLimit(deps.rateLimiter, deps.config.TALLY_AUTH_FAILURES_PER_MINUTE)
  const principals = await createPrincipalCache(keys, deps.sql, deps.log)
  app.addHook('onClose', () => principals.close())

  // The instance-admin API exists only with its key; without it /admin/v1 is an unknown route.
  if (deps.config.TALLY_ADMIN_API_KEY) {
    await app.register(
      adminRoutes({
        ...deps,
        adminKey: deps.config.TALLY_ADMIN_API_KEY,
        authFailures: failures,
        rateLimitPerMinute: deps.config.TALLY_RATE_LIMIT_PER_MINUTE,
        keys,
        exports,
        forgetKey: principals.forget,
        exportLeaseMs: deps.config.TALLY_EXPORT_LEASE,
      }),
    )
  }

  const limits = queryLimits(deps.config)
  const gate = createQueryGate(
    deps.config.TALLY_QUERY_CONCURRENCY_PER_ORG,
    deps.config.TALLY_QUERY_MAX_EXECUTION_TIME,
    deps.config.TALLY_QUERY_PRIORITY === 'fair' ? createFairShare() : undefined,
  )
  const { sqlAccess } = deps
  if ('client' in sqlAccess) app.addHook('onClose', () => sqlAccess.client.close())
  const sqlRunner =
    'client' in sqlAccess
      ? createSqlRunner(
          sqlAccess.client,
          deps.clickhouse,
          sqlLimits(deps.config),
          deps.log,
          deps.config.TALLY_SQL_SEND_TIMEOUT,
        )
      : sqlAccess.unavailable
  const quota = organizationLimits(deps.rateLimiter, {
    requestsPerMinute: deps.config.TALLY_RATE_LIMIT_PER_MINUTE,
    eventsPerMinute: deps.config.TALLY_RATE_LIMIT_EVENTS_PER_MINUTE,
    bytesPerMinute: deps.config.TALLY_RATE_LIMIT_BYTES_PER_MINUTE,
    maxIntakeEvents: deps.config.TALLY_INTAKE_MAX_EVENTS,
    maxIntakeBytes: deps.config.TALLY_INTAKE_MAX_BYTES,
  })
  // Everything registered in here needs an API key and counts against its organization's limits.
  await app.register(async (api) => {
    api.addHook('onRequest', authHook(principals, deps.config.TALLY_ADMIN_API_KEY, failures))
    api.addHook('onRequest', quota.onRequest)
    api.addHook('preParsing', quota.preParsing)
    api.addHook('preValidation', quota.preValidation)
    await api.register(apiKeyRoutes(keys, principals.forget, deps.config.TALLY_MAX_API_KEYS_PER_ORG))
    const requests = requestServices({ ...deps, limits, quota })
    await api.register(requestRoutes({ ...requests, config: deps.config, gate }))
    await api.register(
      otlpRoutes({
        intake: requests.intake,
        maxBytes: deps.config.TALLY_INTAKE_MAX_BYTES,
        maxEvents: deps.config.TALLY_INTAKE_MAX_EVENTS,
        maxSpans: deps.config.TALLY_OTLP_MAX_SPANS,
        decodePool: {
          threads: deps.config.TALLY_OTLP_DECODE_THREADS,
          queuedPerOrganization: deps.config.TALLY_OTLP_QUEUE_PER_ORG,
          queued: deps.config.TALLY_OTLP_QUEUE,
          queuedBytes: deps.config.TALLY_OTLP_QUEUE_BYTES,
          timeoutMs: deps.config.TALLY_OTLP_DECODE_TIMEOUT,
        },
      }),
    )
    await api.register(
      sessionRoutes(
        createSessionRepo(deps.clickhouse, limits),
        gate,
        createSessionDetailRepo(deps.clickhouse, limits),
      ),
    )
    await api.register(scoreRoutes({ ...deps, limits, gate, quota }))
    await api.register(analyticsRoutes(deps.clickhouse, limits, gate))
    await api.register(sqlRoutes(sqlRunner, gate))
    await api.register(promptRoutes(deps))
    await api.register(webhookRoutes(deps))
    await api.register(exportRoutes({ repo: exports, blobs: deps.blobs, config: deps.config }))
  })
  return app
}
