/**
 * The restricted ClickHouse user callers' SQL runs as (`tally_sql`), checked before it is used: the
 * isolation of `POST /v1/sql/query` rests on that user's grants, so Tally verifies them with the
 * engine itself and serves SQL only when they hold. With CLICKHOUSE_URL and no CLICKHOUSE_SQL_URL,
 * Tally makes the user itself where its own user may (a real clickhouse-server with access
 * management); where it may not, SQL stays off and the answer says what to run.
 */
import { createHmac } from 'node:crypto'
import { type ClickHouseClient, ClickHouseError } from '@clickhouse/client'
import { connectSql } from '../../shared/clickhouse/client.ts'
import { causedByClickHouseUnavailable } from '../../shared/clickhouse/errors.ts'
import { LOWEST_PRIORITY } from '../../shared/clickhouse/priority.ts'
import { REQUEST_TABLE } from '../../shared/clickhouse/request-table.ts'
import { sqlViewsDatabase } from '../../shared/clickhouse/sql-views.ts'
import type { Config } from '../../shared/config.ts'
import type { Logger } from '../../shared/logger.ts'

export type SqlAccess = { client: ClickHouseClient } | { unavailable: string }

const USER = 'tally_sql'
const ACCESS_DENIED = '497'

/**
 * The statements that make the user on a clickhouse-server: its profile (the ceilings of
 * clickhouse-server/config.ts's `sql` profile), the user and its one grant.
 */
export function sqlUserStatements(database: string, password: string): string[] {
  return [
    `CREATE SETTINGS PROFILE OR REPLACE ${USER} SETTINGS allow_introspection_functions = 0 CONST, ` +
      'max_execution_time = 30 MAX 300, max_memory_usage = 1073741824 MAX 8589934592, max_threads = 1 MAX 64, ' +
      "result_overflow_mode = 'throw' CONST, read_overflow_mode = 'throw' CONST, timeout_overflow_mode = 'throw' CONST, " +
      `allow_get_client_http_header = 1 CONST, os_thread_priority = 0 MIN 0 MAX ${LOWEST_PRIORITY}`,
    `CREATE USER OR REPLACE ${USER} IDENTIFIED WITH sha256_password BY '${password}' SETTINGS PROFILE ${USER}`,
    `GRANT SELECT ON ${sqlViewsDatabase(database)}.* TO ${USER}`,
  ]
}

/** The same on every API process without a shared secret: derived from Tally's own ClickHouse password. */
function derivedPassword(clickhouseUrl: string): string {
  const url = new URL(clickhouseUrl)
  return createHmac('sha256', decodeURIComponent(url.password) || clickhouseUrl)
    .update(USER)
    .digest('base64url')
}

function withUser(clickhouseUrl: string, password: string): string {
  const url = new URL(clickhouseUrl)
  url.username = USER
  url.password = password
  return url.href
}

/**
 * The SQL user's client once its grants are checked, or why SQL is off. `sqlUrl`: the embedded
 * server's user or CLICKHOUSE_SQL_URL; absent, Tally tries to make the user with `admin`.
 */
export async function openSqlAccess(options: {
  config: Config
  admin: ClickHouseClient
  sqlUrl: string | undefined
  log: Logger
}): Promise<SqlAccess> {
  const { config, admin, log } = options
  const database = config.CLICKHOUSE_DATABASE
  let url = options.sqlUrl
  if (url === undefined) {
    if (!config.CLICKHOUSE_URL) return { unavailable: 'SQL is not set up on this Tally' }
    const password = derivedPassword(config.CLICKHOUSE_URL)
    const statements = sqlUserStatements(database, password)
    try {
      for (const query of statements) await admin.command({ query })
      url = withUser(config.CLICKHOUSE_URL, password)
      log.info({ user: USER }, 'clickhouse_sql_user_made')
    } catch (err) {
      return {
        unavailable:
          `SQL is off: Tally's ClickHouse user could not make the restricted user ${USER} (${refusalOf(err)}). ` +
          `An operator makes it (docs/security.md) and sets CLICKHOUSE_SQL_URL: ${statements
            .map((s) => s.replace(password, '<password>'))
            .join('; ')}`,
      }
    }
  }
  const client = connectSql(url, database, config.TALLY_CLICKHOUSE_REQUEST_TIMEOUT)
  let problem: string | undefined
  try {
    problem = await grantsProblem(client, database)
  } catch (err) {
    await client.close()
    throw err
  }
  if (problem === undefined) return { client }
  await client.close()
  log.error({ problem }, 'clickhouse_sql_user_refused')
  return {
    unavailable: `SQL is off: the ClickHouse user of CLICKHOUSE_SQL_URL ${problem}. It must have SELECT on ${sqlViewsDatabase(database)}.* (or sql_*.*) and nothing else (docs/security.md)`,
  }
}

/** Undefined when the user may read the views and nothing else; else what is wrong, in words. */
async function grantsProblem(client: ClickHouseClient, database: string): Promise<string | undefined> {
  const views = sqlViewsDatabase(database)
  let grants: string[]
  try {
    const rs = await client.query({ query: 'SHOW GRANTS', format: 'JSONEachRow' })
    grants = (await rs.json<Record<string, string>>()).map((row) => Object.values(row)[0] ?? '')
  } catch (err) {
    return `cannot be used (${refusalOf(err)})`
  }
  // The embedded server grants every views database at once (sql_*): each holds only views.
  const allowed = new RegExp(`^GRANT SELECT ON \`?(${views}|sql_\\*)\`?\\.\\* TO `)
  const extra = grants.filter((grant) => !allowed.test(grant))
  if (extra.length > 0) return `has grants beyond the views: ${extra.join('; ')}`
  // The grants are what SHOW GRANTS says; the engine also has to refuse the table itself.
  try {
    await client.query({ query: `SELECT 1 FROM ${database}.${REQUEST_TABLE} LIMIT 0` })
    return `can read ${database}.${REQUEST_TABLE} directly`
  } catch (err) {
    if (err instanceof ClickHouseError && err.code === ACCESS_DENIED) return undefined
    return `could not be checked (${refusalOf(err)})`
  }
}

/**
 * The first line of a failure that speaks against the SQL user or its grants. A server that could
 * not take the call (restarting) says nothing against them: rethrown, so the start retries
 * (clickHouseStartUp) instead of turning SQL off for the process's life.
 */
function refusalOf(err: unknown): string {
  if (causedByClickHouseUnavailable(err)) throw err
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''
}
