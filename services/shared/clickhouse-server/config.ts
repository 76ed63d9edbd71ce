import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { LOWEST_PRIORITY } from '../clickhouse/priority.ts'
import { FILES } from './protocol.ts'

interface User {
  username: string
  password: string
}

/**
 * Tally's own user (every right); `analyst`, what data teams sign in with at Tally's analyst door
 * (a ClickHouse-HTTP endpoint of Tally's, not the engine's port); `analystEngine`, the read-only
 * engine user the door runs their checked queries as; and `sql`, the one Tally runs callers' SQL as
 * (`POST /v1/sql/query`): it reads only the organization-scoped views.
 */
export interface Credentials extends User {
  analyst: User
  analystEngine: User
  sql: User
}

/**
 * The most the `tally_sql` user's queries may ever take, whatever a query or Tally's configuration
 * asks: constraints of its profile. Tally's TALLY_SQL_* limits (lower by default) are set per query.
 */
export const SQL_CEILINGS = {
  executionSeconds: 300,
  rowsToRead: 10_000_000_000,
  bytesToRead: 1024 ** 4,
  memory: 8 * 1024 ** 3,
  resultRows: 10_000_000,
  resultBytes: 1024 ** 3,
  threads: 64,
} as const

const newPassword = () => randomBytes(24).toString('base64url')

/** Where the passwords are kept: Tally's secrets directory, never the engine's own (it can read that). */
const CREDENTIALS_FILE = 'clickhouse.json'
/** Where versions before containment kept them: in the engine's directory. */
const OLD_CREDENTIALS_FILE = 'credentials.json'

/**
 * The passwords of the engine's users, made once and kept in `secretsDir` (mode 0600, in a 0700
 * directory the contained engine cannot reach): any local process can reach 127.0.0.1, so the server
 * must not answer to a user without a password. Created with link(2), which fails if the file
 * exists, so two processes starting at once agree. A file of an older version (in the engine's
 * directory, or without some users) is moved and completed, keeping the passwords it gave.
 */
export function loadCredentials(secretsDir: string, dataDir: string): Credentials {
  mkdirSync(secretsDir, { recursive: true, mode: 0o700 })
  chmodSync(secretsDir, 0o700)
  const path = join(secretsDir, CREDENTIALS_FILE)
  const old = join(dataDir, OLD_CREDENTIALS_FILE)
  if (existsSync(old) && !existsSync(path)) renameSync(old, path)
  rmSync(old, { force: true })
  const fresh: Credentials = {
    username: 'tally',
    password: newPassword(),
    analyst: { username: 'analyst', password: newPassword() },
    analystEngine: { username: 'tally_analyst', password: newPassword() },
    sql: { username: 'tally_sql', password: newPassword() },
  }
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify(fresh)}\n`, { mode: 0o600 })
  try {
    linkSync(tmp, path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    rmSync(tmp, { force: true })
  }
  chmodSync(path, 0o600)
  const stored = JSON.parse(readFileSync(path, 'utf8')) as Partial<Credentials>
  if (typeof stored.username !== 'string' || typeof stored.password !== 'string')
    throw new Error(`${path} holds no username/password: remove it to make new ones`)
  const users = ['analyst', 'analystEngine', 'sql'] as const
  if (users.every((user) => typeof stored[user]?.password === 'string')) return stored as Credentials
  const upgraded = { ...fresh, ...stored } as Credentials
  for (const user of users) if (typeof stored[user]?.password !== 'string') upgraded[user] = fresh[user]
  writeAtomically(path, `${JSON.stringify(upgraded)}\n`)
  return upgraded
}

/**
 * A server that is one node of a cluster: it listens on the native TCP protocol (Distributed
 * tables talk to the other nodes over it), knows the cluster in `remote_servers` (one replica per
 * shard, internal_replication=false: the embedded server has no Keeper, so nothing is replicated),
 * with an interserver `secret` (a node trusts the user a query started as on another node, whose
 * password it need not know), and the `{shard}`/`{replica}` macros of cluster DDL.
 */
export interface ClusterNode {
  tcpPort: number
  /** The cluster's name: a plain identifier. */
  name: string
  secret: string
  /** Every shard's one node, in order: where its native protocol listens. */
  shards: readonly { host: string; tcpPort: number }[]
  macros: { shard: string; replica: string }
}

/**
 * The `cluster` option of each server of a cluster of one-node shards on 127.0.0.1: shard `01`,
 * `02`, … in the order of `tcpPorts` (where each listens on the native protocol), replica `r1`,
 * one interserver secret for all (a fresh one unless given).
 */
export function loopbackShards(
  name: string,
  tcpPorts: readonly number[],
  secret = randomBytes(24).toString('base64url'),
): ClusterNode[] {
  const shards = tcpPorts.map((tcpPort) => ({ host: '127.0.0.1', tcpPort }))
  return tcpPorts.map((tcpPort, i) => ({
    tcpPort,
    name,
    secret,
    shards,
    macros: { shard: String(i + 1).padStart(2, '0'), replica: 'r1' },
  }))
}

/**
 * Below 2 threads in the pool that sends Distributed inserts on to the shards, those inserts
 * stall (measured with libchdb 26.7); ClickHouse's own default is 16.
 */
const DISTRIBUTED_SEND_THREADS = 4

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

function clusterXml(node: ClusterNode): string {
  if (!NAME.test(node.name)) throw new Error(`cluster name "${node.name}" is not a plain identifier`)
  const shards = node.shards
    .map(
      (s) =>
        `      <shard><internal_replication>false</internal_replication><replica><host>${xmlText(s.host)}</host><port>${s.tcpPort}</port></replica></shard>`,
    )
    .join('\n')
  return `
  <remote_servers>
    <${node.name}>
      <secret>${xmlText(node.secret)}</secret>
${shards}
    </${node.name}>
  </remote_servers>
  <macros>
    <shard>${xmlText(node.macros.shard)}</shard>
    <replica>${xmlText(node.macros.replica)}</replica>
  </macros>
  <background_distributed_schedule_pool_size>${DISTRIBUTED_SEND_THREADS}</background_distributed_schedule_pool_size>`
}

/**
 * Writes config.xml and users.xml for clickhouse-local; returns the config file's path. Analysts
 * may read `database` only.
 */
export function writeServerConfig(
  dataDir: string,
  credentials: Credentials,
  database: string,
  /** Where the server sees `dataDir`: the same path, or CONTAINED_DATA_DIR when contained. */
  engineDir: string,
  cluster?: ClusterNode,
): string {
  const configPath = join(dataDir, FILES.config)
  mkdirSync(join(dataDir, FILES.userFiles), { recursive: true, mode: 0o700 })
  mkdirSync(join(dataDir, FILES.backups), { recursive: true, mode: 0o700 })
  writeAtomically(join(dataDir, FILES.users), usersXml(credentials, database))
  writeAtomically(configPath, configXml(engineDir, cluster))
  return configPath
}

/** Readers (a server starting at the same moment) never see half a file. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, text, { mode: 0o600 })
  renameSync(tmp, path)
}

// clickhouse-local reads users only from users_xml (a local_directory entry is ignored, so
// CREATE USER / CREATE ROW POLICY fail: "no writeable access storage"). The log's level and
// path are set on the command line: clickhouse-local overrides logger.level from its options.
// The file paths a query may name are an empty directory of the server's own (clickhouse-local
// does not enforce them, the containment does; they are set for depth). UTC whatever the host's
// zone: the contained server has no /etc/localtime, and times must not depend on where it runs.
const configXml = (engineDir: string, cluster?: ClusterNode) => `<clickhouse>
  <user_directories>
    <users_xml><path>${FILES.users}</path></users_xml>
  </user_directories>
  <user_files_path>${xmlText(join(engineDir, FILES.userFiles))}/</user_files_path>
  <format_schema_path>${xmlText(join(engineDir, FILES.userFiles))}/</format_schema_path>
  <backups><allowed_path>${xmlText(join(engineDir, FILES.backups))}/</allowed_path></backups>
  <timezone>UTC</timezone>
  <shutdown_wait_unfinished>1</shutdown_wait_unfinished>${cluster ? clusterXml(cluster) : ''}
  <logger>
    <size>20M</size>
    <count>3</count>
  </logger>
</clickhouse>
`

const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

const sha256 = (password: string) => createHash('sha256').update(password).digest('hex')

/**
 * What an analyst's query may take at most (the engine's `analyst` profile): the door's deadline
 * (TALLY_ANALYST_TIMEOUT) is set a little past the time limit.
 */
const ANALYST_LIMITS = {
  executionSeconds: 60,
  memory: 4_000_000_000,
  resultRows: 1_000_000,
} as const

/**
 * Settings a ClickHouse driver may change although the analyst user is read-only (readonly=1
 * refuses every other change): harmless ones drivers send on their own (JDBC sends async_insert=0
 * on connect), output shaping, and the limits within the profile's ceilings.
 */
const ANALYST_CHANGEABLE: Record<string, { min?: number | string; max?: number | string }> = {
  async_insert: {},
  wait_for_async_insert: {},
  send_progress_in_http_headers: {},
  http_headers_progress_interval_ms: { min: 100 },
  extremes: {},
  join_use_nulls: {},
  session_timezone: {},
  date_time_output_format: {},
  date_time_input_format: {},
  output_format_json_quote_64bit_integers: {},
  output_format_json_quote_64bit_floats: {},
  output_format_json_quote_decimals: {},
  output_format_json_quote_denormals: {},
  output_format_json_named_tuples_as_objects: {},
  output_format_write_statistics: {},
  output_format_pretty_max_rows: {},
  output_format_pretty_color: {},
  max_result_rows: { min: 1, max: ANALYST_LIMITS.resultRows },
  max_execution_time: { min: 1, max: ANALYST_LIMITS.executionSeconds },
  max_block_size: { min: 1, max: 65_536 },
}

/**
 * Settings clickhouse-local turns on for itself that no user of Tally's may have, and Hyperscan
 * (multiMatch*), whose patterns can take minutes or gigabytes to compile.
 */
const LOCAL_OVERRIDES_OFF = `
      <allow_introspection_functions>0</allow_introspection_functions>
      <implicit_select>0</implicit_select>
      <allow_hyperscan>0</allow_hyperscan>`
const LOCAL_OVERRIDES_CONST = `
        <allow_introspection_functions><const/></allow_introspection_functions>
        <implicit_select><const/></implicit_select>
        <allow_hyperscan><const/></allow_hyperscan>`

/**
 * A user of users.xml who logs in from this machine with a password, runs under `profile`, and holds
 * `grant` (without one: every right).
 */
function passwordUser(name: string, password: string, profile: string, grant?: string): string {
  const grants = grant
    ? `
      <grants>
        <query>${grant}</query>
      </grants>`
    : ''
  return `    <${name}>
      <password_sha256_hex>${sha256(password)}</password_sha256_hex>
      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
      <profile>${profile}</profile>
      <quota>default</quota>${grants}
    </${name}>`
}

/**
 * The engine's users. `default` is the one clickhouse-local's own connection signs in as, with no
 * password (it has no option to pick another, nor to give one; and its networks cannot keep out
 * HTTP clients on 127.0.0.1: clickhouse-local signs in as a loopback address). So over HTTP it must
 * be able to do nothing: its profile allows statements of at most one byte (max_query_size=1,
 * fixed by a constraint), which parse as nothing; clickhouse-local's own session gets a larger
 * max_query_size on its command line (child.ts), which it applies to itself only. Its grants are
 * starting the listener and the keep-alive query's system.numbers. `tally` is the service's user,
 * with every right. `tally_analyst` runs data teams' statements that Tally's analyst door has
 * checked: readonly=1 (no writes, no DDL, no settings but ANALYST_CHANGEABLE), SELECT on Tally's
 * database only, limits so one dashboard cannot starve the service, and a password only Tally
 * knows. `tally_sql` runs callers' SQL (POST /v1/sql/query): SELECT on the `sql_*` databases of
 * organization-scoped views only (clickhouse/sql-views.ts), no sources, system tables only those
 * ClickHouse shows every user (filtered to what it may see), and its limits capped by
 * constraints. Tally adds readonly=1 to each of its queries, so the query's own SETTINGS cannot
 * change a thing.
 */
function usersXml(
  { username, password, analystEngine: analyst, sql }: Credentials,
  database: string,
): string {
  const c = SQL_CEILINGS
  // The sql profile's ceilings, by setting: each is what a query gets, and the most it may ask for.
  const ceilings = Object.entries({
    max_execution_time: c.executionSeconds,
    max_rows_to_read: c.rowsToRead,
    max_bytes_to_read: c.bytesToRead,
    max_memory_usage: c.memory,
    max_result_rows: c.resultRows,
    max_result_bytes: c.resultBytes,
  })
  const ceilingSettings = ceilings.map(([name, value]) => `      <${name}>${value}</${name}>`).join('\n')
  // A shard runs its part of a distributed query without the result limits (ClickHouse sets them
  // to 0: the whole answer is limited where it is put together); a minimum of 1 would clamp them to
  // one row, one byte. So 0 (no limit) is allowed for those two: callers cannot ask for it (Tally
  // adds readonly=1 and its own limits to each query), and a client holding tally_sql's password
  // could name any organization anyway (docs/security.md): that password is the boundary.
  const RESULT_LIMITS = new Set(['max_result_rows', 'max_result_bytes'])
  const ceilingBounds = ceilings
    .map(
      ([name, value]) =>
        `        <${name}><min>${RESULT_LIMITS.has(name) ? 0 : 1}</min><max>${value}</max></${name}>`,
    )
    .join('\n')
  const a = ANALYST_LIMITS
  const changeable = Object.entries(ANALYST_CHANGEABLE)
    .map(
      ([name, { min, max }]) =>
        `        <${name}>${min === undefined ? '' : `<min>${min}</min>`}${max === undefined ? '' : `<max>${max}</max>`}<changeable_in_readonly/></${name}>`,
    )
    .join('\n')
  return `<clickhouse>
  <profiles>
    <default/>
    <keepalive>
      <max_execution_time>0</max_execution_time>
      <max_query_size>1</max_query_size>
      <implicit_select>0</implicit_select>
      <constraints>
        <max_query_size><const/></max_query_size>
        <implicit_select><const/></implicit_select>
      </constraints>
    </keepalive>
    <analyst>
      <readonly>1</readonly>${LOCAL_OVERRIDES_OFF}
      <max_execution_time>${a.executionSeconds}</max_execution_time>
      <max_memory_usage>${a.memory}</max_memory_usage>
      <max_threads>1</max_threads>
      <max_result_rows>${a.resultRows}</max_result_rows>
      <result_overflow_mode>throw</result_overflow_mode>
      <cancel_http_readonly_queries_on_client_close>1</cancel_http_readonly_queries_on_client_close>
      <constraints>${LOCAL_OVERRIDES_CONST}
        <max_memory_usage><const/></max_memory_usage>
        <max_threads><const/></max_threads>
        <result_overflow_mode><const/></result_overflow_mode>
${changeable}
      </constraints>
    </analyst>
    <sql>
      <allow_get_client_http_header>1</allow_get_client_http_header>${LOCAL_OVERRIDES_OFF}
${ceilingSettings}
      <max_threads>1</max_threads>
      <result_overflow_mode>throw</result_overflow_mode>
      <constraints>${LOCAL_OVERRIDES_CONST}
        <allow_get_client_http_header><const/></allow_get_client_http_header>
${ceilingBounds}
        <max_threads><min>1</min><max>${c.threads}</max></max_threads>
        <os_thread_priority><min>0</min><max>${LOWEST_PRIORITY}</max></os_thread_priority>
        <result_overflow_mode><const/></result_overflow_mode>
        <read_overflow_mode><const/></read_overflow_mode>
        <timeout_overflow_mode><const/></timeout_overflow_mode>
      </constraints>
    </sql>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
      <profile>keepalive</profile>
      <quota>default</quota>
      <grants>
        <query>GRANT SYSTEM LISTEN ON *.*</query>
        <query>GRANT SELECT ON system.numbers</query>
      </grants>
    </default>
${passwordUser(username, password, 'default')}
${passwordUser(analyst.username, analyst.password, 'analyst', `GRANT SELECT ON ${database}.*`)}
${passwordUser(sql.username, sql.password, 'sql', 'GRANT SELECT ON sql_*.*')}
  </users>
  <quotas>
    <default/>
  </quotas>
</clickhouse>
`
}
