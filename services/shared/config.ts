import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { z } from 'zod'

/**
 * The most days ClickHouse may keep a row (TALLY_RETENTION_DAYS, an organization's own): its TTL is
 * a DateTime, which ends in 2106 and wraps past it, so a TTL of more days than remain until then
 * (about 28,900 in 2026) would read as a date in the past and delete the rows at once. 10,000
 * days (27 years) stays clear of it until 2079; longer is "for good": leave it unset.
 */
export const MAX_RETENTION_DAYS = 10_000

import { SQL_CEILINGS } from './clickhouse-server/config.ts'

// Values reach the schema trimmed, and an empty one not at all (readVariables): unset.
const optionalString = z.string().optional()

const bool = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((v) => v === 'true' || v === '1')

const DURATION = /^(\d+)(ms|s|m|h|d)$/
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

export function parseDuration(text: string): number {
  const m = DURATION.exec(text.trim())
  if (!m) throw new Error(`"${text}" is not a duration like 500ms, 5s, 2m, 1h or 1d`)
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]
}

/** A duration as parseDuration reads it, in the largest unit that divides it: 31d, 2m, 1500ms. */
export function durationText(ms: number): string {
  const units = Object.entries(UNIT_MS).reverse() as [keyof typeof UNIT_MS, number][]
  const [unit, size] = units.find(([, size]) => ms % size === 0) ?? ['ms', 1]
  return `${ms / size}${unit}`
}

const GiB = 1024 ** 3
const MiB = 1024 ** 2
const count = (fallback: number) =>
  z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(fallback)

/**
 * The longest duration a setting may have unless it says otherwise: a timer given more than
 * 2^31 - 1 ms (about 24.8 days) fires at once, so every duration that sets a timer stays below.
 */
const LONGEST_TIMER = '24d'

/**
 * A duration setting ("500ms", "5s", "2m"…) in milliseconds, at least `atLeast` and at most
 * `atMost` (by default the longest a timer can wait).
 */
const duration = (fallback: string, atLeast?: string, atMost = LONGEST_TIMER) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        const ms = parseDuration(text)
        if (atLeast !== undefined && ms < parseDuration(atLeast))
          ctx.addIssue({ code: 'custom', message: `must be at least ${atLeast}` })
        else if (ms > parseDuration(atMost))
          ctx.addIssue({ code: 'custom', message: `must be at most ${atMost}` })
        else return ms
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message })
      }
      return z.NEVER
    })

/** Proxy addresses named by the proxy-addr package: loopback, linklocal, uniquelocal. */
const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])
const isProxyEntry = (entry: string) => {
  if (PROXY_RANGES.has(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  return isIP(address) !== 0 && rest.length === 0 && (prefix === undefined || /^\d{1,3}$/.test(prefix))
}

/** fastify's trustProxy: false (unset), or the proxies' addresses and CIDR ranges. */
const trustProxy = optionalString.transform((text, ctx): false | string[] => {
  if (text === undefined) return false
  const entries = text.split(',').map((e) => e.trim())
  const bad = entries.find((e) => !isProxyEntry(e))
  if (bad === undefined) return entries
  ctx.addIssue({
    code: 'custom',
    message: `"${bad}" is not an address, a CIDR range, loopback, linklocal or uniquelocal`,
  })
  return z.NEVER
})

/** Comma-separated durations: the waits before retries 1, 2, …; its length is the number of retries. */
const retrySchedule = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        const steps = text.split(',').map(parseDuration)
        if (steps.length === 0) throw new Error('empty schedule')
        const longest = parseDuration(LONGEST_TIMER)
        const over = steps.findIndex((ms) => ms > longest)
        if (over >= 0) throw new Error(`wait ${over + 1} must be at most ${LONGEST_TIMER}`)
        return steps
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message })
        return z.NEVER
      }
    })

/** Every setting of every Tally process. Parsed once at start and passed down. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('127.0.0.1'),
  TALLY_DATA_DIR: z.string().default('./.tally'),
  TALLY_PUBLIC_URL: optionalString,
  TALLY_BOOTSTRAP_API_KEY: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (an API key is a secret)',
  }),
  /** The instance-admin API's key (/admin/v1: organizations); unset: that API does not exist. */
  TALLY_ADMIN_API_KEY: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (an API key is a secret)',
  }),
  TALLY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: optionalString,
  /** How long a new Postgres connection may take, from connecting to the server ready for queries. */
  TALLY_POSTGRES_CONNECT_TIMEOUT: duration('10s', '100ms', '10m'),
  CLICKHOUSE_URL: optionalString,
  /** How long a ClickHouse request may go without a byte from the server (migrations, merges). */
  TALLY_CLICKHOUSE_REQUEST_TIMEOUT: duration('60s'),
  /**
   * How long a process keeps retrying its ClickHouse start-up steps (database, migrations, views)
   * while the server, or a node of the cluster, refuses or drops the connection.
   */
  TALLY_CLICKHOUSE_STARTUP_TIMEOUT: duration('60s', '1s', '1h'),
  /**
   * Days a request is kept in ClickHouse, counted from its created_at (with the tables derived
   * from it); unset: kept for good. Enforced by the engine (TTL), see clickhouse/retention.ts.
   */
  TALLY_RETENTION_DAYS: z.coerce.number().int().min(1).max(MAX_RETENTION_DAYS).optional(),
  /** The embedded ClickHouse server's HTTP port (loopback only); unset: a free one. */
  TALLY_CLICKHOUSE_HTTP_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /**
   * How the embedded ClickHouse process is shut in (docs/security.md): auto (namespaces where the
   * machine allows, else a warning), required (refuse to start without), off.
   */
  TALLY_CLICKHOUSE_CONTAINMENT: z.enum(['auto', 'required', 'off']).default('auto'),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .default('default'),
  /**
   * The ClickHouse cluster (its name in the servers' remote_servers) Tally's tables are spread over:
   * shard-local tables and Distributed tables over them (clickhouse/cluster-ddl.ts). Unset: one node.
   */
  TALLY_CLICKHOUSE_CLUSTER: optionalString.refine(
    (v) => v === undefined || /^[A-Za-z_][A-Za-z0-9_]*$/.test(v),
    {
      message: 'must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*), as in remote_servers',
    },
  ),
  /**
   * Every node of the cluster, comma-separated HTTP URLs: Tally then sends each DDL statement to
   * each node itself, with non-replicated tables, instead of ON CLUSTER with Replicated tables.
   */
  TALLY_CLICKHOUSE_CLUSTER_NODES: z
    .string()
    .optional()
    .transform((text) =>
      (text ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    )
    .refine((urls) => urls.every((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol)), {
      message: 'must be comma-separated http(s) URLs',
    }),
  KAFKA_BROKERS: optionalString,
  KAFKA_CLIENT_ID: z.string().default('tally'),
  TALLY_REQUEST_TOPIC: z.string().default('tally.request-events'),
  TALLY_DLQ_TOPIC: z.string().default('tally.request-events.dlq'),
  /** Prepended to the consumer group ids (tally-ingest, tally-dispatcher): several deployments or test runs on one Kafka. */
  TALLY_CONSUMER_GROUP_PREFIX: z.string().default(''),
  TALLY_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1024).default(6),
  /** How long a process waits for Kafka at start (connect, topics, producer init, group join) before it exits naming the step. */
  TALLY_KAFKA_STARTUP_TIMEOUT: duration('60s', '1s'),
  /** How long a publish may wait, queued and then for Kafka's acknowledgement, before the intake answers 503 (the caller retries). */
  TALLY_KAFKA_SEND_TIMEOUT: duration('10s', '100ms'),
  /** Encoded events waiting for a producer send, in all and per organization; past either, the intake answers 503 with Retry-After. */
  TALLY_PUBLISH_QUEUE_MAX_BYTES: count(64 * MiB),
  TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG: count(16 * MiB),
  /** How long a consumer that stopped heartbeating keeps its partitions (the group's session timeout). */
  TALLY_KAFKA_SESSION_TIMEOUT: duration('10s', '6s'),
  /** Static group membership: a stable id per consumer process (a StatefulSet pod name); a restart under it takes its partitions back at once. */
  TALLY_CONSUMER_INSTANCE_ID: optionalString.refine((v) => v === undefined || /^\S{1,200}$/.test(v), {
    message: 'must be 1 to 200 characters without spaces',
  }),
  /** How long a consumer may make no progress while messages wait on its partitions before it rebuilds its membership. */
  TALLY_CONSUMER_STALL_TIMEOUT: duration('60s', '1s'),
  S3_ENDPOINT: optionalString,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  /** How long connecting to S3 may take. */
  TALLY_S3_CONNECT_TIMEOUT: duration('5s', '100ms', '10m'),
  /** How long one S3 operation may take, retries and the answer's body included (a multipart upload: each part). */
  TALLY_S3_REQUEST_TIMEOUT: duration('30s', '100ms', '1h'),
  REDIS_URL: optionalString,
  /** Browser origins allowed to call the API (CORS), comma-separated; none by default. */
  TALLY_CORS_ORIGINS: z
    .string()
    .default('')
    .transform((text) =>
      text
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .refine(
      (origins) => origins.every((o) => /^https?:\/\/[^/\s]+$/.test(o)),
      'must be origins such as https://app.example.com, comma-separated',
    ),
  /** Per organization and minute: requests, intake events and request-body bytes (429 beyond). */
  TALLY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: count(120_000),
  TALLY_RATE_LIMIT_BYTES_PER_MINUTE: count(1024 * MiB),
  /** API keys one organization may hold (409 beyond). */
  TALLY_MAX_API_KEYS_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(100),
  /** Webhooks one organization may hold (409 beyond): each costs a decision per event. */
  TALLY_MAX_WEBHOOKS_PER_ORG: z.coerce.number().int().min(1).max(10_000).default(100),
  /** Failed authentications per client address per minute; beyond, the address is answered 429 (services/api/http/auth-failures.ts). */
  TALLY_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** Proxies whose X-Forwarded-For names the client; unset: the connection's address is the client's. */
  TALLY_TRUST_PROXY: trustProxy,
  /** How long a client may take to send a request's headers, and the whole request with its body (408 beyond). */
  TALLY_HTTP_HEADERS_TIMEOUT: duration('10s', '100ms'),
  TALLY_HTTP_REQUEST_TIMEOUT: duration('30s', '100ms'),
  /** How long each shutdown step may take before it is abandoned and the next one starts. */
  TALLY_SHUTDOWN_STEP_TIMEOUT: duration('15s', '100ms'),
  TALLY_INTAKE_MAX_EVENTS: z.coerce.number().int().min(1).max(100_000).default(1_000),
  TALLY_INTAKE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Most spans one OTLP export may carry (413 beyond, naming the exporter's batch setting). */
  TALLY_OTLP_MAX_SPANS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** Threads decoding OTLP exports; by default one core is left to the event loop. */
  TALLY_OTLP_DECODE_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(() => Math.max(1, Math.min(4, availableParallelism() - 1))),
  /** OTLP exports of one organization waiting for a decoding thread (429 beyond). */
  TALLY_OTLP_QUEUE_PER_ORG: z.coerce.number().int().min(1).max(10_000).default(8),
  /** OTLP exports of all organizations waiting for a decoding thread (503 beyond). */
  TALLY_OTLP_QUEUE: z.coerce.number().int().min(1).max(100_000).default(64),
  /** Bytes of OTLP bodies waiting for a decoding thread, all organizations together (503 beyond). */
  TALLY_OTLP_QUEUE_BYTES: count(64 * MiB),
  /** How long one export may take to decode; past it the thread is replaced and the export answered 503. */
  TALLY_OTLP_DECODE_TIMEOUT: duration('20s', '100ms'),
  TALLY_INGEST_CHUNK_SIZE: z.coerce.number().int().min(1).max(100_000).default(5_000),
  /** Most bytes of events handed to one write (an insert, a delivery statement); a larger event goes alone. */
  TALLY_INGEST_CHUNK_BYTES: count(32 * MiB),
  /** The ingest's shortest time between two ClickHouse inserts short of a full chunk; 0: none. */
  TALLY_INGEST_LINGER_MS: z.coerce.number().int().min(0).max(5_000).default(250),
  TALLY_PRODUCER_LINGER_MS: z.coerce.number().int().min(0).max(1_000).default(2),
  /** How long the intake waits for ClickHouse to tell the first creation time of re-sent request ids before it goes on without. */
  TALLY_INTAKE_LOOKUP_TIMEOUT: duration('300ms', '1ms'),
  /** How long a score may wait for its request or session before GET /v1/scores reports it orphaned. */
  TALLY_SCORE_ORPHAN_GRACE: duration('15m', '1s'),
  /**
   * Limits of every ClickHouse query run for a caller (request and session queries, the intake's
   * look-up); see services/shared/clickhouse/query-limits.ts and docs/requests.md for the defaults' reasons.
   */
  TALLY_QUERY_MAX_EXECUTION_TIME: duration('10s', '100ms'),
  TALLY_QUERY_MAX_ROWS_TO_READ: count(100_000_000),
  TALLY_QUERY_MAX_BYTES_TO_READ: count(10 * GiB),
  TALLY_QUERY_MAX_MEMORY: count(2 * GiB),
  TALLY_QUERY_MAX_RESULT_ROWS: count(10_000),
  TALLY_QUERY_MAX_RESULT_BYTES: count(32 * MiB),
  /** Half the cores (at least one): one query never holds every core. */
  TALLY_QUERY_MAX_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(() => Math.max(1, Math.floor(availableParallelism() / 2))),
  /**
   * Limits of callers' own SQL (POST /v1/sql/query), passed with every query. The embedded
   * server's `tally_sql` profile caps them (services/shared/clickhouse-server/config.ts).
   */
  TALLY_SQL_MAX_EXECUTION_TIME: duration('30s', '1s').refine(
    (ms) => ms <= SQL_CEILINGS.executionSeconds * 1000,
    {
      message: `must be at most ${SQL_CEILINGS.executionSeconds}s`,
    },
  ),
  /**
   * How long a caller may take to read an answer of POST /v1/sql/query: past it the answer is cut
   * and the organization's slot freed (a slow reader would hold both for as long as it liked).
   */
  TALLY_SQL_SEND_TIMEOUT: duration('10m', '1s'),
  TALLY_SQL_MAX_ROWS_TO_READ: count(100_000_000).pipe(z.number().max(SQL_CEILINGS.rowsToRead)),
  TALLY_SQL_MAX_BYTES_TO_READ: count(10 * GiB).pipe(z.number().max(SQL_CEILINGS.bytesToRead)),
  TALLY_SQL_MAX_MEMORY: count(1 * GiB).pipe(z.number().max(SQL_CEILINGS.memory)),
  TALLY_SQL_MAX_RESULT_ROWS: count(100_000).pipe(z.number().max(SQL_CEILINGS.resultRows)),
  TALLY_SQL_MAX_RESULT_BYTES: count(32 * MiB).pipe(z.number().max(SQL_CEILINGS.resultBytes)),
  /**
   * With CLICKHOUSE_URL: the restricted user callers' SQL runs as (docs/data-teams.md), e.g.
   * http://tally_sql:<password>@clickhouse:8123; unset: POST /v1/sql/query answers 503. The embedded
   * server has that user already.
   */
  CLICKHOUSE_SQL_URL: optionalString,
  /**
   * Tally's analyst door (docs/data-teams.md): a ClickHouse-HTTP endpoint where data teams sign in
   * as `analyst` with TALLY_ANALYST_PASSWORD (embedded: generated, printed at start) and run checked
   * read-only SQL over every organization. With CLICKHOUSE_URL it needs the engine's read-only user,
   * CLICKHOUSE_ANALYST_URL, too; unset: no door. TALLY_ANALYST_PORT unset: a free port.
   */
  CLICKHOUSE_ANALYST_URL: optionalString,
  TALLY_ANALYST_PASSWORD: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (it is a password)',
  }),
  TALLY_ANALYST_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Queries running at once through the analyst door; beyond, ClickHouse's "too many simultaneous queries". */
  TALLY_ANALYST_MAX_QUERIES: z.coerce.number().int().min(1).max(1024).default(4),
  /** How long one statement may take through the analyst door, answer included (the engine's own limit is 60 s). */
  TALLY_ANALYST_TIMEOUT: duration('65s', '1s'),
  /** Queries of one organization running at once per API process; the others wait their turn. */
  TALLY_QUERY_CONCURRENCY_PER_ORG: z.coerce.number().int().min(1).max(1024).default(2),
  TALLY_QUERY_PRIORITY: z.enum(['fair', 'off']).default('fair'),
  /** /metrics for processes without the API role (ingest, dispatcher); unset: none. */
  TALLY_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  TALLY_SIGNED_LINK_TTL: duration('10m'),
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool,
  TALLY_WEBHOOK_RETRY_SCHEDULE: retrySchedule('5s,30s,2m,10m,30m,1h,3h,6h,12h,24h'),
  /** How long a claimed delivery stays its dispatcher's (should exceed the 5 s attempt timeout). */
  TALLY_WEBHOOK_CLAIM_TTL: duration('30s', '1s'),
  TALLY_WEBHOOK_CA_FILE: optionalString,
  TALLY_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(256),
  TALLY_WEBHOOK_CONCURRENCY_PER_DESTINATION: z.coerce.number().int().min(1).max(1_000).default(32),
  /** Bytes of delivery bodies one dispatcher holds in memory (queued, in flight, outcome unwritten). */
  TALLY_WEBHOOK_HELD_BYTES: count(64 * MiB),
  /** Exports (docs/exports.md): export jobs each exporter runs at once; 0: this exporter runs none. */
  TALLY_EXPORT_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(1),
  /** Exports of one organization queued or running at once (POST beyond: 429), and of one schedule (it waits). */
  TALLY_EXPORT_MAX_PENDING: z.coerce.number().int().min(1).max(10_000).default(20),
  /** At most this many rows per export file. */
  TALLY_EXPORT_PART_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
  /** The longest window one export may cover. */
  TALLY_EXPORT_MAX_WINDOW: duration('31d', '1s', '366d'),
  /** How long after a window ends it may be exported: rows still on their way through the pipeline are not cut. */
  TALLY_EXPORT_SETTLE_DELAY: duration('2m'),
  /** The waits between a failed attempt and the next; after the last, the export is failed. */
  TALLY_EXPORT_RETRY_SCHEDULE: retrySchedule('30s,2m,10m,30m,1h'),
  /** How long a claimed export stays its process's without a renewal; a dead process's export is taken over after it. */
  TALLY_EXPORT_LEASE: duration('60s', '1s'),
  /** The longest an idle exporter sleeps without a notification before it looks for due work. */
  TALLY_EXPORT_POLL_INTERVAL: duration('5s', '10ms'),
  /** How long each ClickHouse query of an export (one file, a count) may run. */
  TALLY_EXPORT_QUERY_TIMEOUT: duration('10m', '1s'),
  /** Export schedules one organization may hold (POST beyond: 409). */
  TALLY_EXPORT_MAX_SCHEDULES: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Bytes of export files one organization may have written in the last hour; beyond, its next exports wait. */
  TALLY_EXPORT_MAX_BYTES_PER_HOUR: count(GiB),
  /** How often ingest looks for closed hours of the metrics rollup to build (request_hours). */
  TALLY_METRICS_ROLLUP_INTERVAL: duration('1m', '1s'),
  /** How long after an hour ends ingest builds its rollup: rows still on their way are not cut. */
  TALLY_METRICS_ROLLUP_SETTLE: duration('5m', '0ms'),
  /** Hours older than this are not built: metrics over them read the raw rows (a window, not a timer). */
  TALLY_METRICS_ROLLUP_HORIZON: duration('90d', '1h', '3660d'),
})

export type Config = z.infer<typeof configSchema>

export class ConfigError extends Error {}

/** Every variable the configuration reads. */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape) as (keyof Config)[]

/**
 * The variables as the schema reads them: without the whitespace around their values, and
 * without those left empty. `TALLY_DATA_DIR=` in a compose file or a `.env` means "unset", for
 * every variable alike, never an empty path or an empty list.
 */
function readVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const set: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    const text = value?.trim()
    if (text) set[name] = text
  }
  return set
}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(readVariables(env))
  if (result.success) {
    const config = result.data
    if (config.S3_ENDPOINT && !config.S3_BUCKET) {
      throw new ConfigError('Invalid configuration: S3_BUCKET: required when S3_ENDPOINT is set')
    }
    if (config.TALLY_ADMIN_API_KEY && config.TALLY_ADMIN_API_KEY === config.TALLY_BOOTSTRAP_API_KEY) {
      throw new ConfigError(
        'Invalid configuration: TALLY_ADMIN_API_KEY: must differ from TALLY_BOOTSTRAP_API_KEY (an organization key)',
      )
    }
    if (config.TALLY_RATE_LIMIT_BYTES_PER_MINUTE < config.TALLY_INTAKE_MAX_BYTES) {
      throw new ConfigError(
        'Invalid configuration: TALLY_RATE_LIMIT_BYTES_PER_MINUTE: must be at least TALLY_INTAKE_MAX_BYTES (else the largest intake could never pass)',
      )
    }
    if (config.TALLY_RATE_LIMIT_EVENTS_PER_MINUTE < config.TALLY_INTAKE_MAX_EVENTS) {
      throw new ConfigError(
        'Invalid configuration: TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: must be at least TALLY_INTAKE_MAX_EVENTS (else the largest intake could never pass)',
      )
    }
    if (config.TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG > config.TALLY_PUBLISH_QUEUE_MAX_BYTES) {
      throw new ConfigError(
        'Invalid configuration: TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG: must not exceed TALLY_PUBLISH_QUEUE_MAX_BYTES',
      )
    }
    if (config.TALLY_CLICKHOUSE_CLUSTER && !config.CLICKHOUSE_URL) {
      throw new ConfigError(
        'Invalid configuration: TALLY_CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL (a node of that cluster); the embedded server is one node',
      )
    }
    if (config.TALLY_CLICKHOUSE_CLUSTER_NODES.length > 0 && !config.TALLY_CLICKHOUSE_CLUSTER) {
      throw new ConfigError(
        'Invalid configuration: TALLY_CLICKHOUSE_CLUSTER_NODES: only with TALLY_CLICKHOUSE_CLUSTER',
      )
    }
    const nodes = config.TALLY_CLICKHOUSE_CLUSTER_NODES.map((u) => new URL(u).host)
    if (nodes.length > 0 && config.CLICKHOUSE_URL && !nodes.includes(new URL(config.CLICKHOUSE_URL).host)) {
      // The ledger and the tables Tally reads are on CLICKHOUSE_URL's node: it must get the DDL too.
      throw new ConfigError(
        'Invalid configuration: TALLY_CLICKHOUSE_CLUSTER_NODES: must include the node of CLICKHOUSE_URL (same host and port)',
      )
    }
    if (config.TALLY_HTTP_HEADERS_TIMEOUT > config.TALLY_HTTP_REQUEST_TIMEOUT) {
      throw new ConfigError(
        'Invalid configuration: TALLY_HTTP_HEADERS_TIMEOUT: must not exceed TALLY_HTTP_REQUEST_TIMEOUT',
      )
    }
    return config
  }
  const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`)
}

/**
 * Where callers reach the API: TALLY_PUBLIC_URL, else the address it listens on. `port` is the
 * one it listens on, which with PORT=0 is known only once it does.
 */
export function publicUrl(
  config: Pick<Config, 'TALLY_PUBLIC_URL' | 'HOST' | 'PORT'>,
  port = config.PORT,
): string {
  return config.TALLY_PUBLIC_URL ?? listeningUrl(config.HOST, port)
}

/** `http://host:port`, an IPv6 host in brackets. */
export function listeningUrl(host: string, port: number): string {
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`
}
