import { createHash, randomBytes } from 'node:crypto'
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FILES } from './protocol.ts'

interface User {
  username: string
  password: string
}

/**
 * Tally's own user (every right), the analysts' read-only one, and the one Tally runs callers' SQL
 * as (`POST /v1/sql/query`): it reads only the organization-scoped views.
 */
export interface Credentials extends User {
  analyst: User
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

/**
 * The passwords of the `tally` and `analyst` users, made once per data directory and kept there
 * (mode 0600): any local process can reach 127.0.0.1, so the server must not answer to a user
 * without a password. Created with link(2), which fails if the file exists, so two processes
 * starting at once agree.
 */
export function loadCredentials(dataDir: string): Credentials {
  const path = join(dataDir, FILES.credentials)
  const fresh: Credentials = {
    username: 'tally',
    password: newPassword(),
    analyst: { username: 'analyst', password: newPassword() },
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
  const stored = JSON.parse(readFileSync(path, 'utf8')) as Credentials
  if (typeof stored.username !== 'string' || typeof stored.password !== 'string')
    throw new Error(`${path} holds no username/password: remove it to make new ones`)
  // Made before the analyst or sql user existed: add them, keeping the passwords already given.
  if (typeof stored.analyst?.password !== 'string' || typeof stored.sql?.password !== 'string') {
    const upgraded = { ...fresh, ...stored }
    if (typeof upgraded.analyst?.password !== 'string') upgraded.analyst = fresh.analyst
    if (typeof upgraded.sql?.password !== 'string') upgraded.sql = fresh.sql
    writeAtomically(path, `${JSON.stringify(upgraded)}\n`)
    return upgraded
  }
  return stored
}

/**
 * Writes config.xml and users.xml for clickhouse-local; returns the config file's path. Analysts
 * may read `database` only.
 */
export function writeServerConfig(dataDir: string, credentials: Credentials, database: string): string {
  const configPath = join(dataDir, FILES.config)
  writeAtomically(join(dataDir, FILES.users), usersXml(credentials, database))
  writeAtomically(configPath, CONFIG_XML)
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
const CONFIG_XML = `<clickhouse>
  <user_directories>
    <users_xml><path>${FILES.users}</path></users_xml>
  </user_directories>
  <shutdown_wait_unfinished>1</shutdown_wait_unfinished>
  <logger>
    <size>20M</size>
    <count>3</count>
  </logger>
</clickhouse>
`

const sha256 = (password: string) => createHash('sha256').update(password).digest('hex')

/**
 * `default` is the user clickhouse-local itself runs as (it has no option to pick another): it may
 * only start the listener and read system.numbers for the keep-alive query. Its networks cannot
 * keep out HTTP clients on 127.0.0.1 (clickhouse-local authenticates as a loopback address), hence
 * the narrow grants. `tally` is the service's user, with every right. `analyst` is for data teams:
 * readonly=1 (no writes, no DDL, no settings changed back), SELECT on Tally's database only, and
 * a profile of limits so one dashboard cannot starve the service. `tally_sql` runs callers' SQL
 * (POST /v1/sql/query): SELECT on the `sql_*` databases of organization-scoped views only
 * (clickhouse/sql-views.ts), no table functions reading anything (no CREATE TEMPORARY TABLE, no
 * sources), system tables only those ClickHouse shows every user (filtered to what it may see), and
 * its limits capped by constraints. Tally adds readonly=1 to each of its queries, so the query's
 * own SETTINGS cannot change a thing.
 */
function usersXml({ username, password, analyst, sql }: Credentials, database: string): string {
  const c = SQL_CEILINGS
  return `<clickhouse>
  <profiles>
    <default/>
    <keepalive>
      <max_execution_time>0</max_execution_time>
    </keepalive>
    <analyst>
      <readonly>1</readonly>
      <max_execution_time>60</max_execution_time>
      <max_memory_usage>4000000000</max_memory_usage>
      <max_threads>1</max_threads>
      <max_result_rows>1000000</max_result_rows>
      <result_overflow_mode>throw</result_overflow_mode>
    </analyst>
    <sql>
      <allow_get_client_http_header>1</allow_get_client_http_header>
      <max_execution_time>${c.executionSeconds}</max_execution_time>
      <max_rows_to_read>${c.rowsToRead}</max_rows_to_read>
      <max_bytes_to_read>${c.bytesToRead}</max_bytes_to_read>
      <max_memory_usage>${c.memory}</max_memory_usage>
      <max_result_rows>${c.resultRows}</max_result_rows>
      <max_result_bytes>${c.resultBytes}</max_result_bytes>
      <max_threads>1</max_threads>
      <result_overflow_mode>throw</result_overflow_mode>
      <constraints>
        <allow_get_client_http_header><const/></allow_get_client_http_header>
        <max_execution_time><min>1</min><max>${c.executionSeconds}</max></max_execution_time>
        <max_rows_to_read><min>1</min><max>${c.rowsToRead}</max></max_rows_to_read>
        <max_bytes_to_read><min>1</min><max>${c.bytesToRead}</max></max_bytes_to_read>
        <max_memory_usage><min>1</min><max>${c.memory}</max></max_memory_usage>
        <max_result_rows><min>1</min><max>${c.resultRows}</max></max_result_rows>
        <max_result_bytes><min>1</min><max>${c.resultBytes}</max></max_result_bytes>
        <max_threads><min>1</min><max>${c.threads}</max></max_threads>
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
    <${username}>
      <password_sha256_hex>${sha256(password)}</password_sha256_hex>
      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </${username}>
    <${analyst.username}>
      <password_sha256_hex>${sha256(analyst.password)}</password_sha256_hex>
      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
      <profile>analyst</profile>
      <quota>default</quota>
      <grants>
        <query>GRANT SELECT ON ${database}.*</query>
      </grants>
    </${analyst.username}>
    <${sql.username}>
      <password_sha256_hex>${sha256(sql.password)}</password_sha256_hex>
      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>
      <profile>sql</profile>
      <quota>default</quota>
      <grants>
        <query>GRANT SELECT ON sql_*.*</query>
      </grants>
    </${sql.username}>
  </users>
  <quotas>
    <default/>
  </quotas>
</clickhouse>
`
}
