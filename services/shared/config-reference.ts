import { z } from 'zod'
import { type Config, configSchema } from './config.ts'

interface Described {
  /** What the variable does, in a sentence or two (Markdown). */
  meaning: string
  /** For a variable without a default: what leaving it unset means. */
  unset?: string
  /** The default as a reader should see it, where the schema's would mislead (machine-dependent). */
  shownDefault?: string
}

/**
 * The meaning of every configuration variable: docs/configuration.md is generated from this and
 * the zod schema (`npm run docs:config`), and a test fails when the file differs. A variable added
 * to the schema without an entry here does not type-check.
 */
const REFERENCE: Record<keyof Config, Described> = {
  PORT: {
    meaning:
      'Port the API listens on; `0`: a free one, named by the ready line, the `process_ready` log line and the OpenAPI document.',
  },
  HOST: { meaning: 'Address the API (and the analyst door) listens on.' },
  TALLY_DATA_DIR: {
    meaning:
      'Embedded Postgres, the embedded ClickHouse server, blob files and export parts on their way (`tmp/`; leftovers of killed processes are removed at start).',
  },
  TALLY_PUBLIC_URL: {
    meaning: 'Base of the links Tally hands out (signed prompt-body and export-file links).',
    unset: '`http://HOST:PORT`',
  },
  TALLY_BOOTSTRAP_API_KEY: {
    meaning:
      "The first organization's admin key, registered on the first start (at least 32 characters). Restarts keep the key registered then.",
    unset: 'a key is generated and printed once',
  },
  TALLY_ADMIN_API_KEY: {
    meaning:
      'Bearer key of the instance-admin API `/admin/v1` (organizations; [admin.md](admin.md)); at least 32 characters, and not the bootstrap key.',
    unset: 'no admin API: `/admin/v1` is an unknown route',
  },
  TALLY_LOG_LEVEL: { meaning: 'Log level (pino); `debug` also logs every request.' },
  DATABASE_URL: { meaning: 'Postgres connection URL.', unset: 'embedded Postgres under `TALLY_DATA_DIR`' },
  TALLY_POSTGRES_CONNECT_TIMEOUT: {
    meaning:
      'How long a new Postgres connection may take until the server is ready for queries (100ms–10m); a start that runs out exits 1 naming Postgres.',
  },
  CLICKHOUSE_URL: {
    meaning:
      "ClickHouse's HTTP endpoint, e.g. `http://tally:<password>@clickhouse:8123`. Required where the embedded server cannot run (anything but Linux x64 with glibc).",
    unset: 'the embedded ClickHouse server (Linux x64, glibc only)',
  },
  TALLY_CLICKHOUSE_REQUEST_TIMEOUT: {
    meaning: 'How long a ClickHouse request may go without a byte from the server (long migrations, merges).',
  },
  TALLY_CLICKHOUSE_STARTUP_TIMEOUT: {
    meaning:
      'How long a process retries its ClickHouse start-up steps (database, migrations, views) while the server or a node of the cluster refuses or drops connections, before it exits 1 naming the step.',
  },
  TALLY_RETENTION_DAYS: {
    meaning:
      'Days ClickHouse keeps what an organization records (a request from its `created_at`, with the session and metrics rows derived from it, and scores and properties set after the fact), for every organization without days of its own (PATCH /admin/v1/organizations/{id}); ClickHouse deletes older rows in its merges (a TTL), on one node or every node of a cluster. See docs/operations.md "Retention".',
    unset: 'kept for good',
  },
  TALLY_CLICKHOUSE_HTTP_PORT: {
    meaning: "The embedded ClickHouse server's HTTP port (127.0.0.1 only).",
    unset: 'a free port',
  },
  TALLY_CLICKHOUSE_CONTAINMENT: {
    meaning:
      'How the embedded ClickHouse process is shut in ([security.md](security.md)): `auto` (namespaces where the machine allows, else a warning), `required` (refuse to start without), `off`.',
  },
  CLICKHOUSE_DATABASE: { meaning: "Tally's ClickHouse database; created if missing." },
  TALLY_CLICKHOUSE_CLUSTER: {
    meaning:
      'ClickHouse cluster (as in `remote_servers`) to shard over: local tables, `Distributed` ones over them ([operations.md](operations.md)). Needs `CLICKHOUSE_URL`.',
    unset: 'one node: the tables as they are',
  },
  TALLY_CLICKHOUSE_CLUSTER_NODES: {
    meaning:
      "Every node's HTTP URL, comma-separated: Tally sends each DDL statement to each node, with plain `MergeTree` tables (no Keeper).",
    unset: 'DDL `ON CLUSTER`, `Replicated*MergeTree` tables (Keeper)',
  },
  KAFKA_BROKERS: {
    meaning:
      'Comma-separated Kafka brokers. The separate ingest and dispatcher processes need it; the API publishes to it.',
    unset: 'events go from the API to the ingest and dispatch handlers in-process (`npm start`)',
  },
  KAFKA_CLIENT_ID: { meaning: 'Client id Tally gives Kafka.' },
  TALLY_REQUEST_TOPIC: { meaning: 'Topic of request events; created at start if missing.' },
  TALLY_DLQ_TOPIC: {
    meaning: 'Dead-letter topic of events that cannot be decoded; created at start if missing.',
  },
  TALLY_CONSUMER_GROUP_PREFIX: {
    meaning:
      'Prefix of the consumer groups `tally-ingest` and `tally-dispatcher`: several deployments or test runs on one Kafka.',
  },
  TALLY_TOPIC_PARTITIONS: { meaning: 'Partitions of the topics Tally creates.' },
  TALLY_KAFKA_STARTUP_TIMEOUT: {
    meaning:
      'How long a process waits for Kafka at start (connect, topics, producer, group join) before it exits 1 naming the brokers and the step.',
  },
  TALLY_KAFKA_SEND_TIMEOUT: {
    meaning:
      "How long a publish may wait, queued and then for Kafka's acknowledgement, before the intake answers 503 (the caller retries).",
  },
  TALLY_PUBLISH_QUEUE_MAX_BYTES: {
    meaning:
      'Bytes of encoded events waiting for a producer send (embedded: waiting to be stored); beyond, the intake answers 503 with `Retry-After`.',
  },
  TALLY_PUBLISH_QUEUE_MAX_BYTES_PER_ORG: {
    meaning: 'The same per organization; at most `TALLY_PUBLISH_QUEUE_MAX_BYTES`.',
  },
  TALLY_KAFKA_SESSION_TIMEOUT: {
    meaning:
      "How long a consumer that stopped heartbeating keeps its partitions (the group's session timeout; at least 6s).",
  },
  TALLY_CONSUMER_INSTANCE_ID: {
    meaning:
      'Static group membership: a stable id per consumer process (e.g. a StatefulSet pod name); a restart under it takes its partitions back at once ([operations.md](operations.md)).',
    unset: 'dynamic membership',
  },
  TALLY_CONSUMER_STALL_TIMEOUT: {
    meaning:
      'A consumer with messages waiting on its partitions and no progress this long makes its group membership anew.',
  },
  S3_ENDPOINT: {
    meaning:
      'S3-compatible object storage for prompt bodies and export files (the bucket is created if missing).',
    unset: 'files under `$TALLY_DATA_DIR/blobs`, served through signed links',
  },
  S3_BUCKET: { meaning: 'The bucket; required with `S3_ENDPOINT`.', unset: 'no S3' },
  S3_REGION: { meaning: 'The S3 region.' },
  S3_ACCESS_KEY_ID: { meaning: "The S3 access key's id.", unset: "the AWS SDK's default credentials" },
  S3_SECRET_ACCESS_KEY: {
    meaning: "The S3 access key's secret.",
    unset: "the AWS SDK's default credentials",
  },
  TALLY_S3_CONNECT_TIMEOUT: { meaning: 'How long connecting to S3 may take (100ms–10m).' },
  TALLY_S3_REQUEST_TIMEOUT: {
    meaning:
      "How long one S3 operation may take, retries and the answer's body included (100ms–1h; a multipart upload: each part).",
  },
  REDIS_URL: {
    meaning:
      'Redis for rate-limit windows shared by every API process; if Redis stops answering, requests are let through.',
    unset: 'windows per process, in memory',
  },
  TALLY_CORS_ORIGINS: {
    meaning:
      'Browser origins allowed to call the API (CORS), comma-separated, e.g. `https://app.example.com`; empty: none ([api.md](api.md#http-conventions)).',
  },
  TALLY_RATE_LIMIT_PER_MINUTE: { meaning: 'Requests per organization per minute (429 beyond).' },
  TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: {
    meaning:
      'Intake events per organization per minute, also at most twice that rate in any second; at least `TALLY_INTAKE_MAX_EVENTS`.',
  },
  TALLY_RATE_LIMIT_BYTES_PER_MINUTE: {
    meaning:
      'Request-body bytes per organization per minute, also at most twice that rate in any second; at least `TALLY_INTAKE_MAX_BYTES`.',
  },
  TALLY_MAX_API_KEYS_PER_ORG: { meaning: 'API keys one organization may hold (409 beyond).' },
  TALLY_MAX_WEBHOOKS_PER_ORG: {
    meaning:
      "Webhooks one organization may hold (409 beyond): the dispatcher decides every event of the organization for each of them, so their number is the organization's share of its work.",
  },
  TALLY_AUTH_FAILURES_PER_MINUTE: {
    meaning:
      'Failed authentications per client address (IPv6: its /64) per minute; beyond, that address is answered 429 until the minute ends.',
  },
  TALLY_TRUST_PROXY: {
    meaning:
      'Proxies whose `X-Forwarded-For` names the client: addresses, CIDR ranges, `loopback`, `linklocal`, `uniquelocal`, comma-separated. Set it behind a load balancer.',
    unset: "the connection's address is the client's",
  },
  TALLY_HTTP_HEADERS_TIMEOUT: {
    meaning: "How long a client may take to send a request's headers (408 and closed beyond).",
  },
  TALLY_HTTP_REQUEST_TIMEOUT: {
    meaning: 'How long a client may take to send a whole request with its body (408 and closed beyond).',
  },
  TALLY_SHUTDOWN_STEP_TIMEOUT: {
    meaning:
      'How long each shutdown step may take before it is abandoned (logged, named) and the next one starts.',
  },
  TALLY_INTAKE_MAX_EVENTS: { meaning: 'Most events one `POST /v1/request/log` takes (413 beyond).' },
  TALLY_INTAKE_MAX_BYTES: {
    meaning:
      'Most bytes one intake body may have (413 beyond); the OTLP routes apply it before and after gzip.',
  },
  TALLY_OTLP_MAX_SPANS: {
    meaning:
      "Most spans one OTLP export may carry (413 beyond, naming the exporter's `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).",
  },
  TALLY_OTLP_DECODE_THREADS: {
    meaning:
      'Worker threads that decode OTLP exports and map their spans, off the event loop; exports wait for one in a queue per organization, served in turn.',
    shownDefault: 'the cores less one, 1 to 4',
  },
  TALLY_OTLP_QUEUE_PER_ORG: {
    meaning:
      "OTLP exports of one organization waiting for a decoding thread; beyond, **429** with `Retry-After` (one organization's exports cannot fill the queue).",
  },
  TALLY_OTLP_QUEUE: {
    meaning:
      'OTLP exports of all organizations waiting for a decoding thread; beyond, **503** with `Retry-After`.',
  },
  TALLY_OTLP_QUEUE_BYTES: {
    meaning:
      'Bytes of the OTLP bodies waiting for a decoding thread, all organizations together (they are held in memory); beyond, **503** with `Retry-After`. One export is always taken when nothing waits.',
  },
  TALLY_OTLP_DECODE_TIMEOUT: {
    meaning:
      'How long decoding one export may take; past it the thread is replaced and the export answered **503** naming `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`.',
  },
  TALLY_INGEST_CHUNK_SIZE: {
    meaning: 'Most events in one write of a consumer (a ClickHouse insert, delivery rows).',
  },
  TALLY_INGEST_CHUNK_BYTES: {
    meaning: 'Most bytes of events handed to one write; a larger event goes alone.',
  },
  TALLY_INGEST_LINGER_MS: {
    meaning:
      'The ingest’s shortest time between two ClickHouse inserts, in milliseconds: a chunk short of `TALLY_INGEST_CHUNK_SIZE` and `TALLY_INGEST_CHUNK_BYTES` waits for more until this long after the last insert began; after a quiet spell, or an insert that took longer, it is written at once. ClickHouse spends about 30 µs per row on inserts of 5,000 rows and 80 on inserts of 1,000 (bench/README.md). 0: no wait.',
  },
  TALLY_PRODUCER_LINGER_MS: {
    meaning: 'How long the producer gathers intakes into one send, in milliseconds.',
  },
  TALLY_INTAKE_LOOKUP_TIMEOUT: {
    meaning:
      'How long the intake waits for ClickHouse to tell the first creation time of re-sent request ids before it goes on without.',
  },
  TALLY_SCORE_ORPHAN_GRACE: {
    meaning:
      'How long a score may wait for the request or session it grades to be stored before `GET /v1/scores?status=orphaned` reports it (docs/scores.md).',
  },
  TALLY_QUERY_MAX_EXECUTION_TIME: {
    meaning:
      'Time limit of each ClickHouse query run for a caller (request and session queries); 422 beyond, as for the other `TALLY_QUERY_MAX_*`.',
  },
  TALLY_QUERY_MAX_ROWS_TO_READ: { meaning: 'Rows one caller query may read (`max_rows_to_read`).' },
  TALLY_QUERY_MAX_BYTES_TO_READ: { meaning: 'Bytes one caller query may read (`max_bytes_to_read`).' },
  TALLY_QUERY_MAX_MEMORY: { meaning: 'Memory of one caller query (`max_memory_usage`).' },
  TALLY_QUERY_MAX_RESULT_ROWS: { meaning: 'Rows of one caller query’s result (`max_result_rows`).' },
  TALLY_QUERY_MAX_RESULT_BYTES: { meaning: 'Bytes of one caller query’s result (`max_result_bytes`).' },
  TALLY_QUERY_MAX_THREADS: {
    meaning: 'Threads of one caller query (`max_threads`): one query never holds every core.',
    shownDefault: 'half the cores, at least 1',
  },
  TALLY_SQL_MAX_EXECUTION_TIME: {
    meaning:
      "Time limit of callers' own SQL (`POST /v1/sql/query`, [data-teams.md](data-teams.md)); 422 beyond, as for the other `TALLY_SQL_MAX_*`. The embedded server's `tally_sql` profile caps them all.",
  },
  TALLY_SQL_SEND_TIMEOUT: {
    meaning:
      "How long a caller may take to read its SQL answer; past it the answer is cut and the organization's query slot freed.",
  },
  TALLY_SQL_MAX_ROWS_TO_READ: { meaning: "Rows one caller's SQL query may read." },
  TALLY_SQL_MAX_BYTES_TO_READ: { meaning: "Bytes one caller's SQL query may read." },
  TALLY_SQL_MAX_MEMORY: { meaning: "Memory of one caller's SQL query." },
  TALLY_SQL_MAX_RESULT_ROWS: { meaning: "Rows of one caller's SQL result." },
  TALLY_SQL_MAX_RESULT_BYTES: { meaning: "Bytes of one caller's SQL result." },
  CLICKHOUSE_SQL_URL: {
    meaning:
      "With `CLICKHOUSE_URL`: the restricted user callers' SQL runs as, e.g. `http://tally_sql:<password>@clickhouse:8123` ([data-teams.md](data-teams.md)).",
    unset: "the embedded server's `tally_sql`; with `CLICKHOUSE_URL`, `POST /v1/sql/query` answers 503",
  },
  CLICKHOUSE_ANALYST_URL: {
    meaning:
      "With `CLICKHOUSE_URL`: the engine's read-only user behind the analyst door, where data teams run checked read-only SQL over every organization ([data-teams.md](data-teams.md)).",
    unset: "the embedded server's `tally_analyst`; with `CLICKHOUSE_URL`, no door",
  },
  TALLY_ANALYST_PASSWORD: {
    meaning: 'What data teams sign in to the analyst door with, as `analyst` (at least 32 characters).',
    unset: 'embedded: generated, printed at start; with `CLICKHOUSE_URL`: no door',
  },
  TALLY_ANALYST_PORT: { meaning: "The analyst door's port, on `HOST`; `0`: a free one." },
  TALLY_ANALYST_MAX_QUERIES: {
    meaning:
      'Statements running at once through the analyst door; beyond, ClickHouse\'s "too many simultaneous queries".',
  },
  TALLY_ANALYST_TIMEOUT: {
    meaning:
      "How long one statement may take through the analyst door, answer included (the engine's own limit is 60 s).",
  },
  TALLY_QUERY_CONCURRENCY_PER_ORG: {
    meaning:
      'Queries of one organization running at once per API process; the others wait their turn (429 after the time limit).',
  },
  TALLY_QUERY_PRIORITY: {
    meaning:
      "`fair`: each organization's queries run in ClickHouse at the CPU priority (`os_thread_priority`, a nice value 0–19) its use of the last seconds earns, so one organization keeping the engine busy cannot take a core from another's small query; needs the server's CAP_SYS_NICE ([operations.md](operations.md)). `off`: all at 0.",
  },
  TALLY_METRICS_PORT: {
    meaning:
      '`/livez`, `/readyz` and `/metrics` of a process without the API role (ingest, dispatcher, exporter); `0`: a free one, logged as `health_server_listening`.',
    unset: 'none',
  },
  TALLY_SIGNED_LINK_TTL: { meaning: 'Lifetime of the signed links to prompt bodies and export files.' },
  TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    meaning: 'Allow webhook destinations on loopback and private addresses (local use and tests only).',
    shownDefault: '`false`',
  },
  TALLY_WEBHOOK_RETRY_SCHEDULE: {
    meaning: 'The waits before webhook retries 1, 2, …; its length is the number of retries.',
  },
  TALLY_WEBHOOK_CLAIM_TTL: {
    meaning:
      'How long a dispatcher owns a claimed delivery before another may take it (at least 1s; above the 5 s attempt timeout).',
  },
  TALLY_WEBHOOK_CA_FILE: {
    meaning: "An extra CA for webhook receivers (tests); in production use Node's `NODE_EXTRA_CA_CERTS`.",
    unset: "Node's CAs",
  },
  TALLY_WEBHOOK_CONCURRENCY: { meaning: 'Webhook attempts in flight per dispatcher.' },
  TALLY_WEBHOOK_CONCURRENCY_PER_DESTINATION: { meaning: 'Webhook attempts in flight per destination.' },
  TALLY_WEBHOOK_HELD_BYTES: {
    meaning:
      'Bytes of delivery bodies one dispatcher holds in memory (queued, in flight, outcome not yet written).',
  },
  TALLY_EXPORT_CONCURRENCY: {
    meaning:
      'Export jobs each exporter runs at once; `0`: this process runs none ([exports.md](exports.md)).',
  },
  TALLY_EXPORT_MAX_PENDING: {
    meaning:
      "Exports of one organization queued or running at once, its schedules' included (POST beyond: 429).",
  },
  TALLY_EXPORT_PART_ROWS: { meaning: 'Most rows per export file.' },
  TALLY_EXPORT_MAX_WINDOW: {
    meaning: 'The longest window one export may cover (a window, not a timer: up to 366d).',
  },
  TALLY_EXPORT_SETTLE_DELAY: {
    meaning:
      'How long after a window ends it may be exported, so rows still in the pipeline are not cut; schedules wait as long.',
  },
  TALLY_EXPORT_RETRY_SCHEDULE: {
    meaning:
      'The waits between a failed export attempt and the next; after the last, the export is `failed`.',
  },
  TALLY_EXPORT_LEASE: {
    meaning:
      "How long a claimed export stays its process's without a renewal; a dead process's export is taken over after it.",
  },
  TALLY_EXPORT_POLL_INTERVAL: {
    meaning: 'The longest an idle exporter sleeps without a notification (a queued export wakes it at once).',
  },
  TALLY_EXPORT_QUERY_TIMEOUT: {
    meaning: 'How long each ClickHouse query of an export (one file, a count) may run.',
  },
  TALLY_EXPORT_MAX_SCHEDULES: { meaning: 'Export schedules one organization may hold (POST beyond: 409).' },
  TALLY_EXPORT_MAX_BYTES_PER_HOUR: {
    meaning:
      'Bytes of export files one organization may have written in the last hour; beyond, its next exports wait.',
  },
  TALLY_METRICS_ROLLUP_INTERVAL: {
    meaning:
      'How often ingest looks for closed hours of the metrics and sessions rollups (`request_hours`, `session_hour_totals`) to build or rebuild; a full round (200 hours) goes on at once.',
  },
  TALLY_METRICS_ROLLUP_SETTLE: {
    meaning:
      'How long after an hour ends its rollup is built, so rows still in the pipeline are not cut (a row after the build only sends that hour back to raw reads until the next round).',
  },
  TALLY_METRICS_ROLLUP_HORIZON: {
    meaning:
      'Hours older than this are not built; `POST /v1/metrics/query` reads them from the raw rows (exact, slower). A window, not a timer: up to 3660d.',
  },
}

interface JsonProperty {
  type?: string
  default?: unknown
  enum?: string[]
  minimum?: number
  maximum?: number
}

const KiB = 1024
const sizeNote = (n: number) => {
  for (const [unit, size] of [
    ['GiB', KiB ** 3],
    ['MiB', KiB ** 2],
  ] as const)
    if (n >= size && n % size === 0) return ` (${n / size} ${unit})`
  return ''
}

function defaultText(name: keyof Config, property: JsonProperty): string {
  const { shownDefault, unset } = REFERENCE[name]
  if (shownDefault) return shownDefault
  if (property.default === undefined) return `unset: ${unset ?? 'none'}`
  if (property.default === '') return 'empty'
  if (typeof property.default === 'number') return `\`${property.default}\`${sizeNote(property.default)}`
  return `\`${String(property.default)}\``
}

const DURATION_NAMES = /(TIMEOUT|TTL|DELAY|WINDOW|LEASE|INTERVAL|EXECUTION_TIME)$/

function valuesText(name: keyof Config, property: JsonProperty): string {
  if (property.enum) return property.enum.map((v) => `\`${v}\``).join(', ')
  if (property.type === 'integer') {
    const max = property.maximum === Number.MAX_SAFE_INTEGER ? undefined : property.maximum
    return max === undefined ? `integer ≥ ${property.minimum}` : `integer ${property.minimum}–${max}`
  }
  if (name.endsWith('_SCHEDULE')) return 'durations, comma-separated'
  if (DURATION_NAMES.test(name)) return 'duration (`500ms`, `5s`, `2m`, `1h`, `1d`)'
  return 'text'
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

/** A Markdown table with its columns padded as the formatter (Biome) writes them. */
function table(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, 3, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)]
}

/** docs/configuration.md, as `npm run docs:config` writes it. */
export function configurationDoc(): string {
  const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as {
    properties: Record<string, JsonProperty>
  }
  const rows = (Object.keys(configSchema.shape) as (keyof Config)[]).map((name) => {
    const property = schema.properties[name] ?? {}
    return [
      `\`${name}\``,
      defaultText(name, property),
      valuesText(name, property),
      REFERENCE[name].meaning,
    ].map(cell)
  })
  return [
    '# Configuration',
    '',
    '<!-- Generated from the zod configuration schema (services/shared/config.ts) and the meanings in',
    '     services/shared/config-reference.ts by `npm run docs:config`; test/docs checks it. Do not edit. -->',
    '',
    'Every Tally process reads its settings from environment variables, validates them once at start and',
    'exits naming each bad variable. Values are read without the whitespace around them; a variable left',
    'empty (`TALLY_DATA_DIR=` in a compose file or a `.env`) or holding only whitespace is unset, and its',
    'default applies. A duration is a number with a unit: `500ms`, `5s`, `2m`, `1h`, `1d`; it is at most',
    '`24d` unless its row gives another bound (a timer set past 2^31 ms would fire at once).',
    '',
    ...table(['variable', 'default', 'values', 'meaning'], rows),
    '',
    "Receivers whose certificates come from a private CA are trusted through Node's own `NODE_EXTRA_CA_CERTS`.",
    '',
  ].join('\n')
}
