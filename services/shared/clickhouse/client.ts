import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { join, resolve } from 'node:path'
import {
  type ClickHouseClient,
  ClickHouseLogLevel,
  type ClickHouseSettings,
  type Logger as ClientLogger,
  createClient,
  type WarnLogParams,
} from '@clickhouse/client'
import type { ClickHouseServer } from '../clickhouse-server/handle.ts'
import { startClickHouseServer } from '../clickhouse-server/server.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'
import { type ClickHouseLayout, onCluster, SINGLE_NODE } from './cluster-ddl.ts'
import { sqlViewsDatabase } from './sql-views.ts'
import { timed } from './timed.ts'

export type { ClickHouseClient }

export interface ClickHouseHandle {
  client: ClickHouseClient
  /**
   * The restricted user callers' SQL runs as (POST /v1/sql/query), with its password: the embedded
   * server's `tally_sql`, or CLICKHOUSE_SQL_URL; absent when neither.
   */
  sqlUrl?: string
  /**
   * What Tally's analyst door (services/api/analyst) needs: the read-only engine user data teams'
   * checked queries run as, and the name and password data teams sign in with at the door. The
   * embedded server's own users, or CLICKHOUSE_ANALYST_URL and TALLY_ANALYST_PASSWORD; absent when
   * neither.
   */
  analyst?: { engineUrl: string; username: string; password: string }
  /** Where it runs, for logs: the server's address without credentials. */
  describe: string
  /** One node, or the cluster TALLY_CLICKHOUSE_CLUSTER names (cluster-ddl.ts). */
  layout: ClickHouseLayout
  /** Per-node cluster DDL: a client for each of TALLY_CLICKHOUSE_CLUSTER_NODES; else absent. */
  nodes?: ClickHouseClient[]
  /** The embedded server this process started or attached to; absent with CLICKHOUSE_URL. */
  embedded?: {
    endpoint: string
    /** How the server's process is shut in, or why it is not. */
    containment: string
    /** True when another Tally process owns the server. */
    attached: boolean
    /** Called once if the server ends while this process still uses it. */
    onLost(listener: () => void): void
  }
  close(): Promise<void>
}

/** A ClickHouse URL as logs and messages show it: user and password as `***`. */
export const withoutCredentials = (url: string) => url.replace(/\/\/[^@/]*@/, '//***@')

/** The name data teams sign in with at the analyst door. */
const ANALYST_USERNAME = 'analyst'

const settings: ClickHouseSettings = {
  // Counts and sums come back as JSON numbers rather than quoted strings.
  output_format_json_quote_64bit_integers: 0,
  date_time_output_format: 'iso',
}

/**
 * On a cluster, a subquery of `IN` or `JOIN` over a Distributed table inside a query over another
 * (the session page's `session_id IN (SELECT … FROM session_hours …)`, the top-N dimensions of
 * metrics) is refused by ClickHouse's default (`deny`). `allow` runs the subquery as written on
 * each shard, over the whole cluster: the answer is one node's, at the cost of each shard asking
 * every shard. `global` (run once, sent to the shards) refuses the session page's nested IN on
 * 26.7 ("Invalid local IN function name globalIn"); `local` (each shard's own rows) suits
 * subqueries keyed by session, a session living on one shard, but gives each shard its own top N
 * of metrics' dimensions.
 */
const CLUSTER_SETTINGS: ClickHouseSettings = {
  distributed_product_mode: 'allow',
  // An insert into a Distributed table returns once every shard has its rows, not once they are
  // queued on the node Tally asked: the ingest commits its Kafka offsets only for rows on their
  // shard, and the intake's look-up of a re-sent id sees a row as soon as its insert returned. A
  // shard that is down fails the insert, which the ingest retries, instead of a queue filling.
  distributed_foreground_insert: 1,
}

/**
 * ClickHouse over HTTP, always through @clickhouse/client: at CLICKHOUSE_URL, or else a local
 * server run from the library the chdb package installs, with its data under
 * $TALLY_DATA_DIR/clickhouse-server (started by the first Tally process on that directory; the
 * others attach to it). Creates CLICKHOUSE_DATABASE when missing.
 */
export async function openClickHouse(config: Config, log: Logger): Promise<ClickHouseHandle> {
  const database = config.CLICKHOUSE_DATABASE
  if (config.CLICKHOUSE_URL) {
    const layout: ClickHouseLayout = config.TALLY_CLICKHOUSE_CLUSTER
      ? {
          kind: 'cluster',
          cluster: config.TALLY_CLICKHOUSE_CLUSTER,
          database,
          ddl: config.TALLY_CLICKHOUSE_CLUSTER_NODES.length > 0 ? 'per-node' : 'on-cluster',
        }
      : SINGLE_NODE
    const timeout = config.TALLY_CLICKHOUSE_REQUEST_TIMEOUT
    const nodes: ClickHouseClient[] = []
    const closeAll = () => Promise.all(nodes.map((n) => n.close())).then(() => {})
    try {
      // Each node's database first: the Distributed tables of one node name the others'.
      for (const url of config.TALLY_CLICKHOUSE_CLUSTER_NODES)
        nodes.push(await connect(url, database, timeout, log))
    } catch (err) {
      await closeAll()
      throw err
    }
    let client: ClickHouseClient
    try {
      client = await connect(
        config.CLICKHOUSE_URL,
        database,
        timeout,
        log,
        onCluster(layout),
        layout.kind === 'cluster' ? CLUSTER_SETTINGS : {},
      )
    } catch (err) {
      await closeAll()
      throw err
    }
    return {
      client,
      layout,
      ...(nodes.length > 0 ? { nodes } : {}),
      ...(config.CLICKHOUSE_SQL_URL ? { sqlUrl: config.CLICKHOUSE_SQL_URL } : {}),
      ...(config.CLICKHOUSE_ANALYST_URL && config.TALLY_ANALYST_PASSWORD
        ? {
            analyst: {
              engineUrl: config.CLICKHOUSE_ANALYST_URL,
              username: ANALYST_USERNAME,
              password: config.TALLY_ANALYST_PASSWORD,
            },
          }
        : {}),
      describe:
        withoutCredentials(config.CLICKHOUSE_URL) +
        (layout.kind === 'cluster' ? ` (cluster ${layout.cluster}, DDL ${layout.ddl})` : ''),
      close: async () => {
        await client.close()
        await closeAll()
      },
    }
  }
  const dataDir = resolve(config.TALLY_DATA_DIR, 'clickhouse-server')
  adoptInProcessData(resolve(config.TALLY_DATA_DIR, 'clickhouse'), dataDir, log)
  const server: ClickHouseServer = await startClickHouseServer({
    dataDir,
    secretsDir: resolve(config.TALLY_DATA_DIR, 'secrets'),
    containment: config.TALLY_CLICKHOUSE_CONTAINMENT,
    ...(config.TALLY_CLICKHOUSE_HTTP_PORT === undefined
      ? {}
      : { httpPort: config.TALLY_CLICKHOUSE_HTTP_PORT }),
    analystDatabase: database,
    log: log.child({ engine: 'clickhouse' }),
  })
  let client: ClickHouseClient
  try {
    client = await connect(server.url, database, config.TALLY_CLICKHOUSE_REQUEST_TIMEOUT, log)
  } catch (err) {
    await server.stop()
    throw err
  }
  let closing = false
  return {
    client,
    sqlUrl: server.sqlUrl,
    analyst: {
      engineUrl: server.analystEngineUrl,
      username: server.analyst.username,
      password: config.TALLY_ANALYST_PASSWORD ?? server.analyst.password,
    },
    layout: SINGLE_NODE,
    describe: `embedded server ${server.endpoint} (${dataDir}${server.attached ? ', attached' : ''})`,
    embedded: {
      endpoint: server.endpoint,
      containment: server.containment,
      attached: server.attached,
      onLost: (listener) => server.onExit(() => closing || listener()),
    },
    async close() {
      closing = true
      // Clients first: an idle keep-alive connection makes the server wait for it when it stops.
      await client.close()
      await server.stop()
    },
  }
}

/**
 * A client for the restricted user callers' SQL runs as (`sqlUrl`), reading the views'
 * database (clickhouse/sql-views.ts) of Tally's `database`.
 */
export function connectSql(url: string, database: string, timeoutMs: number): ClickHouseClient {
  return timed(
    createClient({
      url,
      database: sqlViewsDatabase(database),
      request_timeout: timeoutMs,
      // A refused query is an answer to its caller (400), not an error of Tally's to log.
      log: { level: ClickHouseLogLevel.OFF },
    }),
  )
}

async function connect(
  url: string,
  database: string,
  timeoutMs: number,
  log: Logger,
  /** ` ON CLUSTER <name>` when the database is created on every node at once. */
  onCluster = '',
  extra: ClickHouseSettings = {},
): Promise<ClickHouseClient> {
  const logged = { LoggerClass: clientLogger(log) }
  if (database !== 'default') {
    const admin = createClient({ url, request_timeout: timeoutMs, log: logged })
    try {
      // The name matched CLICKHOUSE_DATABASE's identifier rule in the config: no quoting needed.
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}${onCluster}` })
    } finally {
      await admin.close()
    }
  }
  return timed(
    createClient({
      url,
      database,
      clickhouse_settings: { ...settings, ...extra },
      request_timeout: timeoutMs,
      log: logged,
    }),
  )
}

/** What the client rejects a request with when its abort signal fired. */
const ABORTED = 'The user aborted a request.'

/**
 * The client's own log (a failed ping, a socket it gave up on, a setting it warns about) as
 * events of Tally's: its default logger writes text to the console, outside the JSON lines and
 * their levels. The client makes its logger from a class, without arguments. A request Tally
 * aborted itself (shutdown, a caller gone, its own deadline) is not an error of the server's:
 * it goes at debug level; whoever aborted it says why.
 */
function clientLogger(log: Logger): new () => ClientLogger {
  const child = log.child({ component: 'clickhouse-client' })
  const to =
    (level: 'trace' | 'debug' | 'info' | 'warn' | 'error') =>
    ({ module, message, args, err }: WarnLogParams) => {
      const at = level === 'error' && err?.message === ABORTED ? 'debug' : level
      child[at]({ module, ...args, ...(err ? { err } : {}) }, message)
    }
  return class {
    trace = to('trace')
    debug = to('debug')
    info = to('info')
    warn = to('warn')
    error = to('error')
  }
}

/**
 * Tally's first versions ran ClickHouse in process (chdb) with its data in $TALLY_DATA_DIR/clickhouse.
 * The server reads the same format: on the first start of the server, that directory becomes its
 * data, so nothing recorded before is lost.
 */
function adoptInProcessData(oldDir: string, dataDir: string, log: Logger): void {
  const data = join(dataDir, 'data')
  if (!existsSync(join(oldDir, 'metadata')) || existsSync(data)) return
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  renameSync(oldDir, data)
  log.info({ from: oldDir, to: data }, 'clickhouse_in_process_data_adopted')
}
