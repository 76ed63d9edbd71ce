import type { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { type ClickHouseClient, ClickHouseError, type ClickHouseSettings } from '@clickhouse/client'
import { Counter } from 'prom-client'
import { FILE_FORMATS } from '../../shared/clickhouse/file-formats.ts'
import { DeadlinePassed, type QueryLimits } from '../../shared/clickhouse/query-limits.ts'
import { READ_SETTINGS } from '../../shared/clickhouse/request-table.ts'
import { SQL_ORGANIZATION_HEADER, SQL_VIEWS } from '../../shared/clickhouse/sql-views.ts'
import { AppError, badRequest } from '../../shared/errors.ts'
import { createSqlGuard, EXPLAIN_SETTINGS, SqlRefused } from './guard.ts'

/**
 * Runs a caller's SQL as the restricted ClickHouse user (`tally_sql`), against the views of
 * services/shared/clickhouse/sql-views.ts. What keeps an organization to its own rows is
 * ClickHouse's: the user's grants (those views, nothing else), the views' filter on the
 * `X-Tally-Organization` header Tally sets here, and readonly=1 set with Tally's limits on each
 * request, so no SETTINGS in the query can loosen them. Before it runs, guard.ts checks ClickHouse's
 * own parse of the text: one SELECT (no FORMAT of its own: Tally picks the format) whose every
 * function is on the allowlist (no file(), no hostName(), no url(), …).
 */

type SqlFormat = 'json' | 'csv' | 'parquet'

type SqlParams = Record<string, string | number | boolean | null>

interface SqlColumn {
  name: string
  type: string
}

interface SqlRows {
  columns: SqlColumn[]
  rows: Record<string, unknown>[]
  statistics: { elapsed_ms: number; rows_read: number; bytes_read: number }
}

interface SqlFile {
  contentType: string
  extension: string
  stream: Readable
}

interface SqlTable {
  name: string
  description: string
  columns: (SqlColumn & { description: string })[]
}

export interface SqlRunner {
  rows(organizationId: string, sql: string, params: SqlParams): Promise<SqlRows>
  file(
    organizationId: string,
    sql: string,
    params: SqlParams,
    format: Exclude<SqlFormat, 'json'>,
  ): Promise<SqlFile>
  schema(): Promise<SqlTable[]>
}

const queriesTotal = new Counter({
  name: 'tally_sql_queries_total',
  help: "Callers' SQL queries (POST /v1/sql/query) by outcome: ok, refused (4xx), failed",
  labelNames: ['outcome'],
})

/** ClickHouse's "Code: 62. DB::Exception: …  (SYNTAX_ERROR) (version 26.7.2.1)", as the caller reads it. */
function callerMessage(err: ClickHouseError): string {
  return err.message
    .replace(/^Code: \d+\. DB::Exception: /, '')
    .replace(/\s*\(version [^)]*\)\s*$/, '')
    .trim()
}

/** Errors of the server rather than of the query: the caller should retry, not rewrite. */
const SERVER_SIDE = new Set([
  '202', // TOO_MANY_SIMULTANEOUS_QUERIES
  '209', // SOCKET_TIMEOUT
  '210', // NETWORK_ERROR
  '242', // TABLE_IS_READ_ONLY
  '394', // QUERY_WAS_CANCELLED
])

export function createSqlRunner(client: ClickHouseClient, limits: QueryLimits): SqlRunner {
  function settings(extra: ClickHouseSettings = {}): ClickHouseSettings {
    return {
      ...(limits.settings as ClickHouseSettings),
      ...READ_SETTINGS,
      // When Tally stops waiting (the deadline, a client gone), the server stops working too.
      cancel_http_readonly_queries_on_client_close: 1,
      date_time_output_format: 'iso',
      ...extra,
      // With the settings above, in the same request: from here on the query can change none.
      readonly: '1',
    }
  }

  /** Checks `sql` is one SELECT, then runs `action` as the organization, under the deadline. */
  async function run<T>(
    organizationId: string,
    sql: string,
    params: SqlParams,
    action: (options: { abort_signal: AbortSignal; http_headers: Record<string, string> }) => Promise<T>,
  ): Promise<T> {
    const deadline = AbortSignal.timeout(limits.deadlineMs)
    const options = { abort_signal: deadline, http_headers: { [SQL_ORGANIZATION_HEADER]: organizationId } }
    // exec sends the text as it is: query() would add a FORMAT clause of its own.
    const guard = createSqlGuard(async (statement, query_params) => {
      const { stream } = await client.exec({
        query: statement,
        query_params,
        clickhouse_settings: settings(EXPLAIN_SETTINGS),
        ...options,
      })
      return text(stream)
    })
    try {
      await guard.check(sql, 'select', params)
      const result = await action(options)
      queriesTotal.inc({ outcome: 'ok' })
      return result
    } catch (err) {
      const refused = toCallerError(err, deadline.aborted)
      queriesTotal.inc({ outcome: refused ? 'refused' : 'failed' })
      throw refused ?? err
    }
  }

  function toCallerError(err: unknown, deadlinePassed: boolean): AppError | undefined {
    if (err instanceof AppError) return err
    if (err instanceof SqlRefused) return badRequest(`sql: ${err.message}`)
    const limit = limits.exceeded(deadlinePassed ? new DeadlinePassed() : err)
    if (limit) return limit
    if (err instanceof ClickHouseError) {
      if (SERVER_SIDE.has(err.code))
        return new AppError(
          503,
          'clickhouse_busy',
          `ClickHouse could not run the query now: ${callerMessage(err)}; retry`,
        )
      return badRequest(`sql: ${callerMessage(err)}`)
    }
    return undefined
  }

  return {
    rows: (organizationId, sql, params) =>
      run(organizationId, sql, params, async (options) => {
        const started = performance.now()
        const rs = await client.query({
          query: sql,
          query_params: params,
          format: 'JSONCompact',
          // The whole answer before the first byte (it is at most max_result_bytes): a limit met
          // half-way is an error status, not a connection cut in the middle of the JSON.
          clickhouse_settings: settings({ output_format_json_quote_64bit_integers: 1, wait_end_of_query: 1 }),
          ...options,
        })
        const answer = await rs.json<unknown[]>()
        const columns = (answer.meta ?? []).map(({ name, type }) => ({ name, type }))
        return {
          columns,
          rows: answer.data.map((values) => Object.fromEntries(columns.map((c, i) => [c.name, values[i]]))),
          statistics: {
            elapsed_ms: Math.round(
              answer.statistics ? answer.statistics.elapsed * 1000 : performance.now() - started,
            ),
            rows_read: answer.statistics?.rows_read ?? 0,
            bytes_read: answer.statistics?.bytes_read ?? 0,
          },
        }
      }),

    file: (organizationId, sql, params, format) =>
      run(organizationId, sql, params, async (options) => {
        const f = FILE_FORMATS[format]
        const { stream } = await client.exec({
          query: `${sql}\nFORMAT ${f.clickhouse}`,
          query_params: params,
          // The whole answer before the first byte: an error is a status, not a cut-off file.
          clickhouse_settings: settings({ wait_end_of_query: 1 }),
          ...options,
        })
        return { contentType: f.contentType, extension: f.extension, stream }
      }),

    async schema() {
      const rs = await client.query({
        query:
          'SELECT table, name, type FROM system.columns WHERE database = currentDatabase() ORDER BY table, position',
        format: 'JSONEachRow',
        clickhouse_settings: settings(),
      })
      const found = await rs.json<{ table: string; name: string; type: string }>()
      return SQL_VIEWS.map((view) => ({
        name: view.name,
        description: view.description,
        columns: view.columns.map(({ name, description }) => {
          const type = found.find((c) => c.table === view.name && c.name === name)?.type
          if (type === undefined)
            throw new Error(`SQL view ${view.name} has no column ${name}: is it up to date?`)
          return { name, type, description }
        }),
      }))
    },
  }
}
