import { PassThrough, type Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client'
import { clickHouseAnswer } from '../../shared/clickhouse/errors.ts'
import { FILE_FORMATS } from '../../shared/clickhouse/file-formats.ts'
import { enginePriority } from '../../shared/clickhouse/priority.ts'
import { endQuery, endQueryEventually } from '../../shared/clickhouse/query-end.ts'
import { DeadlinePassed, type QueryLimits, ResultTooLarge } from '../../shared/clickhouse/query-limits.ts'
import { READ_SETTINGS } from '../../shared/clickhouse/request-table.ts'
import { SQL_ORGANIZATION_HEADER, SQL_VIEWS, sqlQueryId } from '../../shared/clickhouse/sql-views.ts'
import { AppError, badRequest } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import { counter } from '../../shared/metrics.ts'
import { checkAnswerText, createSqlGuard, EXPLAIN_SETTINGS, SqlRefused } from './guard.ts'
import { jsonEnvelope } from './json-envelope.ts'

/**
 * Runs a caller's SQL as the restricted ClickHouse user (`tally_sql`), against the views of
 * services/shared/clickhouse/sql-views.ts. What keeps an organization to its own rows is
 * ClickHouse's: the user's grants (those views, nothing else), the views' filter on the
 * `X-Tally-Organization` header Tally sets here, and readonly=1 set with Tally's limits on each
 * request, so no SETTINGS in the query can loosen them. Before it runs, guard.ts checks ClickHouse's
 * own parse of the text: one SELECT (no FORMAT of its own: Tally picks the format) whose every
 * function is on the allowlist (no file(), no hostName(), no url(), …).
 */

/** How answers are sent: the envelope, or a file ClickHouse writes, streamed through. */
const SQL_FORMATS = {
  json: { clickhouse: 'JSON', contentType: 'application/json; charset=utf-8', extension: undefined },
  jsonl: FILE_FORMATS.jsonl,
  csv: FILE_FORMATS.csv,
  tsv: {
    clickhouse: 'TabSeparatedWithNames',
    contentType: 'text/tab-separated-values; charset=utf-8',
    extension: 'tsv',
  },
  parquet: FILE_FORMATS.parquet,
} as const

type SqlFormat = keyof typeof SQL_FORMATS

type SqlParams = Record<string, string | number | boolean | null>

interface SqlColumn {
  name: string
  type: string
}

/** An answer on its way: `settled` resolves once the server's query has ended, however it ends. */
interface SqlAnswer {
  contentType: string
  /** A file's name ending; undefined for the JSON envelope. */
  extension: string | undefined
  stream: Readable
  settled: Promise<void>
}

interface SqlTable {
  name: string
  description: string
  columns: (SqlColumn & { description: string })[]
}

export interface SqlRunner {
  /**
   * Checks and starts the query as `organizationId`; resolves once ClickHouse has answered whole
   * (an error is an AppError: a refusal, a limit, the engine busy). Until `settled`, the caller holds
   * the organization's slot: the answer is being sent, or an abandoned query is being ended.
   */
  run(
    organizationId: string,
    sql: string,
    params: SqlParams,
    format: SqlFormat,
    clientGone: AbortSignal,
    /** Keeps the organization's slot until the promise settles: a killed query still running. */
    hold: (until: Promise<unknown>) => void,
  ): Promise<SqlAnswer>
  schema(): Promise<SqlTable[]>
}

/** How long the answer waits for a killed query to be gone before it is sent anyway. */
const END_WAIT_MS = 5_000

/** The text of an answer may be this many times the engine's max_result_bytes (blocks in memory) at most. */
const TEXT_PER_RESULT_BYTE = 4

const queriesTotal = counter(
  'tally_sql_queries_total',
  "Callers' SQL queries (POST /v1/sql/query) by outcome: ok, refused (4xx), failed",
  {
    labelNames: ['outcome'],
  },
)

export function createSqlRunner(
  client: ClickHouseClient,
  admin: ClickHouseClient,
  limits: QueryLimits,
  log: Logger,
  /** How long the caller may take to read its answer (TALLY_SQL_SEND_TIMEOUT). */
  sendTimeoutMs: number,
): SqlRunner {
  function settings(extra: ClickHouseSettings = {}): ClickHouseSettings {
    return {
      ...(limits.settings as ClickHouseSettings),
      ...READ_SETTINGS,
      // When Tally stops waiting (the deadline, a client gone), the server stops working too.
      cancel_http_readonly_queries_on_client_close: 1,
      date_time_output_format: 'iso',
      // The priority the organization's recent use earns (the query gate decides it).
      ...enginePriority(),
      ...extra,
      // With the settings above, in the same request: from here on the query can change none.
      readonly: '1',
    }
  }

  function toCallerError(err: unknown, deadlinePassed: boolean): AppError | undefined {
    if (err instanceof AppError) return err
    if (err instanceof SqlRefused) return badRequest(`sql: ${err.message}`)
    return limits.exceeded(deadlinePassed ? new DeadlinePassed() : err) ?? clickHouseAnswer(err, 'sql: ')
  }

  /**
   * Ends the server's query (KILL … SYNC) and waits a little for it to be gone. A query that
   * outlives that (the engine stops only between blocks) keeps its organization's slot, through
   * `hold`, until the server no longer lists it: the caller has its answer meanwhile.
   */
  async function ended(queryId: string, hold: (until: Promise<unknown>) => void): Promise<void> {
    if (await endQuery(admin, queryId, Math.min(limits.deadlineMs, END_WAIT_MS))) return
    log.warn({ queryId }, 'sql_query_end_unconfirmed: its slot stays held until the server ends it')
    hold(endQueryEventually(admin, queryId, log))
  }

  return {
    async run(organizationId, sql, params, format, clientGone, hold) {
      const deadline = AbortSignal.timeout(limits.deadlineMs)
      const abort = AbortSignal.any([deadline, clientGone])
      const headers = { [SQL_ORGANIZATION_HEADER]: organizationId }
      // Names the organization to a cluster's shards (sql-views.ts), which see no headers.
      const queryId = sqlQueryId(organizationId)
      let started = false
      // exec sends the text as it is: query() would add a FORMAT clause of its own.
      const guard = createSqlGuard(async (statement, query_params) => {
        const { stream } = await client.exec({
          query: statement,
          query_params,
          clickhouse_settings: settings(EXPLAIN_SETTINGS),
          abort_signal: abort,
          http_headers: headers,
        })
        return checkAnswerText(stream)
      })
      const f = SQL_FORMATS[format]
      try {
        await guard.check(sql, 'select', params)
        started = true
        const { stream, summary } = await client.exec({
          query: `${sql}\nFORMAT ${f.clickhouse}`,
          query_params: params,
          query_id: queryId,
          // The whole answer before the first byte: an error (a limit met half-way) is a status,
          // not a cut-off answer. The rows stream through Tally, never held whole.
          clickhouse_settings: settings({
            wait_end_of_query: 1,
            output_format_json_quote_64bit_integers: 1,
            output_format_json_pretty_print: 1,
            output_format_json_validate_utf8: 1,
          }),
          abort_signal: abort,
          http_headers: headers,
        })
        // The answer is whole on the server now, and its summary counts what the engine's own
        // check of max_result_bytes can miss (a constant column): over it, a 422, not a stream.
        const maxResultBytes = Number(limits.settings.max_result_bytes)
        if (Number(summary?.result_bytes ?? 0) > maxResultBytes) {
          stream.destroy()
          throw new ResultTooLarge(`the answer holds ${summary?.result_bytes} bytes`)
        }
        const capped = capBytes(maxResultBytes * TEXT_PER_RESULT_BYTE)
        const body = new PassThrough()
        const flowing =
          format === 'json' ? pipeline(stream, jsonEnvelope(), capped, body) : pipeline(stream, capped, body)
        // A caller reading slowly holds its organization's slot and an engine connection: not
        // past the send timeout. The answer is cut (the caller sees it end early) and logged.
        const sending = setTimeout(
          () =>
            body.destroy(
              new Error(`the answer was not taken within ${sendTimeoutMs} ms (TALLY_SQL_SEND_TIMEOUT)`),
            ),
          sendTimeoutMs,
        )
        const settled = flowing
          .finally(() => clearTimeout(sending))
          .then(
            () => void queriesTotal.inc({ outcome: 'ok' }),
            async (err: unknown) => {
              queriesTotal.inc({ outcome: 'failed' })
              log.warn({ err, queryId, clientGone: clientGone.aborted }, 'sql_answer_cut')
              await ended(queryId, hold)
            },
          )
        return { contentType: f.contentType, extension: f.extension, stream: body, settled }
      } catch (err) {
        if (started) await ended(queryId, hold)
        const refused = toCallerError(err, deadline.aborted)
        queriesTotal.inc({ outcome: refused ? 'refused' : 'failed' })
        throw refused ?? err
      }
    },

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

/** Passes bytes on until `max` have passed; then fails the stream (the answer is cut, and logged). */
function capBytes(max: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length
      if (seen > max) return callback(new Error(`the answer's text passed ${max} bytes`))
      callback(null, chunk)
    },
  })
}
