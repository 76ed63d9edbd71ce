import type { Readable } from 'node:stream'
import { z } from 'zod'
import { PROPERTY_UPDATE_TABLE, SCORE_TABLE } from '../shared/clickhouse/annotation-tables.ts'
import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import { FILE_FORMATS } from '../shared/clickhouse/file-formats.ts'
import { BACKGROUND_PRIORITY } from '../shared/clickhouse/priority.ts'
import {
  PROPERTIES_TYPE,
  READ_SETTINGS,
  REQUEST_COLUMNS,
  REQUEST_TABLE,
} from '../shared/clickhouse/request-table.ts'
import type { ExportFormat } from '../shared/exports/contract.ts'
import type { CompiledFilter } from '../shared/filters/compile.ts'
import { clickHouseTime } from '../shared/timestamp.ts'

/**
 * What an export holds: every column of request_response_rmt but the row version (ingested_at),
 * bodies included, under the table's own names, with `properties` as it is now (its updates set
 * after the fact applied); then the request's live scores: `scores` (name → number, the average
 * when several scores share a name; booleans 1 or 0) and `score_categories` (name → category of
 * its categorical scores, the latest when several share a name). UUIDs are written as text, which
 * every Parquet reader takes (ClickHouse would write them as 16 raw bytes).
 */
export const EXPORT_COLUMNS = [
  ...REQUEST_COLUMNS.filter((c) => c.name !== 'ingested_at').map((c) => c.name),
  'scores',
  'score_categories',
]

/** The request's columns read from the table (`r`), by the outer select's names. */
const SOURCE_COLUMNS = REQUEST_COLUMNS.filter((c) => c.name !== 'ingested_at')

const SELECT_LIST = [
  ...SOURCE_COLUMNS.map((c) =>
    c.kind === 'uuid'
      ? `toString(r.${c.name}) AS ${c.name}`
      : c.name === 'properties'
        ? `CAST(mapUpdate(r.properties, u.updates), '${PROPERTIES_TYPE}') AS properties`
        : `r.${c.name} AS ${c.name}`,
  ),
  'sc.scores AS scores',
  'sc.categories AS score_categories',
].join(', ')

/** Where one file ends: the sorting key of its last row. */
export interface Cursor {
  createdAtMs: number
  requestId: string
}

export interface ExportScope {
  organizationId: string
  from: Date
  to: Date
  filter: CompiledFilter
}

const KEY = '(request_created_at, request_id)'
const TIME = "DateTime64(3, 'UTC')"

/**
 * The rows of the scope, deduplicated (FINAL): one organization, [from, to), the filter, and
 * after the cursor when there is one. Every value is a query parameter; the SQL text varies only
 * between these two closed forms and the compiled filter's placeholders. `filtered: false` leaves
 * the filter out (a superset of the scope's keys, for look-ups by request id).
 */
function where(
  scope: ExportScope,
  after: Cursor | null,
  filtered = true,
): { sql: string; params: Record<string, unknown> } {
  return {
    sql: `organization_id = {organization_id:UUID}
      AND request_created_at >= {from:${TIME}} AND request_created_at < {to:${TIME}}
      ${filtered ? `AND (${scope.filter.sql})` : ''}
      ${after ? `AND request_created_at >= {after_at:${TIME}} AND ${KEY} > ({after_at:${TIME}}, {after_id:UUID})` : ''}`,
    params: {
      ...(filtered ? scope.filter.params : {}),
      organization_id: scope.organizationId,
      from: clickHouseTime(scope.from.getTime()),
      to: clickHouseTime(scope.to.getTime()),
      ...(after ? { after_at: clickHouseTime(after.createdAtMs), after_id: after.requestId } : {}),
    },
  }
}

/**
 * One file's rows with their annotations. The requests of the file's key range come from the
 * table (FINAL, the scope's filter, ordered by key); the property updates and live scores are read
 * for the organization and for the request ids of that range only (`part`: the same range without
 * the filter, its key columns only), each grouped to one row per request, so the LEFT JOINs add
 * no row and the file holds exactly the rows that nextPart and count count.
 */
function fileQuery(requests: string, part: string, format: string): string {
  return `SELECT ${SELECT_LIST}
    FROM (SELECT ${SOURCE_COLUMNS.map((c) => c.name).join(', ')} FROM ${REQUEST_TABLE} FINAL WHERE ${requests}) AS r
    LEFT JOIN (
      SELECT request_id AS updated_request_id,
             CAST(mapFromArrays(groupArray(key), groupArray(value)), '${PROPERTIES_TYPE}') AS updates
      FROM ${PROPERTY_UPDATE_TABLE} FINAL
      WHERE organization_id = {organization_id:UUID}
        AND request_id IN (SELECT request_id FROM ${REQUEST_TABLE} WHERE ${part})
      GROUP BY request_id
    ) AS u ON r.request_id = u.updated_request_id
    LEFT JOIN (
      SELECT scored_request_id,
             mapSort(mapFromArrays(groupArrayIf(name, NOT categorical), groupArrayIf(average, NOT categorical))) AS scores,
             mapSort(mapFromArrays(groupArrayIf(name, categorical), groupArrayIf(category, categorical))) AS categories
      FROM (
        SELECT request_id AS scored_request_id, name, data_type = 'categorical' AS categorical,
               avg(value) AS average, argMax(string_value, (created_at, id)) AS category
        FROM ${SCORE_TABLE} FINAL
        WHERE organization_id = {organization_id:UUID} AND is_deleted = 0 AND target_kind = 'request'
          AND request_id IN (SELECT request_id FROM ${REQUEST_TABLE} WHERE ${part})
        GROUP BY request_id, name, categorical
      )
      GROUP BY scored_request_id
    ) AS sc ON r.request_id = sc.scored_request_id
    ORDER BY r.request_created_at, r.request_id
    FORMAT ${format}`
}

const boundary = z.array(z.object({ rows: z.number().int(), at: z.number().int(), id: z.string() }))
const counted = z.array(z.object({ rows: z.number().int() }))

export function createExportQueries(
  client: ClickHouseClient,
  options: { timeoutMs: number; maxThreads: number },
) {
  const settings = {
    ...READ_SETTINGS,
    // WHERE and ORDER BY mean the columns, not the text aliases of the UUIDs in the select list.
    prefer_column_name_to_alias: 1,
    max_execution_time: Math.ceil(options.timeoutMs / 1000),
    max_threads: options.maxThreads,
    date_time_output_format: 'iso',
    output_format_json_quote_64bit_integers: 0,
    // Snappy: every Parquet reader takes it (zstd, ClickHouse's default, needs an extra codec in some).
    output_format_parquet_compression_method: 'snappy',
    // Row groups of bounded size: ClickHouse holds one in memory while it writes it.
    output_format_parquet_row_group_size: '10000',
    output_format_parquet_row_group_size_bytes: String(64 * 1024 * 1024),
    // When the worker stops reading (shutdown, a lost lease), the server stops too.
    cancel_http_readonly_queries_on_client_close: 1,
    // Background work: a busy core goes to callers waiting on an answer first.
    os_thread_priority: String(BACKGROUND_PRIORITY),
  } as const

  // Past max_execution_time, how long Tally still waits for ClickHouse's own answer.
  const deadline = (signal: AbortSignal) =>
    AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs + 5_000)])

  const rows = async (query: string, params: Record<string, unknown>, signal: AbortSignal) => {
    const rs = await client.query({
      query,
      query_params: params,
      format: 'JSONEachRow',
      clickhouse_settings: settings,
      abort_signal: deadline(signal),
    })
    return rs.json()
  }

  return {
    /**
     * The next file's extent: how many rows follow the cursor, up to `limit`, and the sorting key
     * of the last of them; null when none follow.
     */
    async nextPart(
      scope: ExportScope,
      after: Cursor | null,
      limit: number,
      signal: AbortSignal,
    ): Promise<{ rows: number; last: Cursor } | null> {
      const w = where(scope, after)
      const [found] = boundary.parse(
        await rows(
          `SELECT count() AS rows, toUnixTimestamp64Milli(max(k).1) AS at, toString(max(k).2) AS id
           FROM (SELECT ${KEY} AS k FROM ${REQUEST_TABLE} FINAL WHERE ${w.sql}
                 ORDER BY request_created_at, request_id LIMIT {limit:UInt64})`,
          { ...w.params, limit },
          signal,
        ),
      )
      if (!found || found.rows === 0) return null
      return { rows: found.rows, last: { createdAtMs: found.at, requestId: found.id } }
    },

    /** The rows after `after` up to and including `last`, in key order, in the format's bytes. */
    async streamPart(
      scope: ExportScope,
      after: Cursor | null,
      last: Cursor,
      format: ExportFormat,
      signal: AbortSignal,
    ): Promise<Readable> {
      const w = where(scope, after)
      const upTo = `${KEY} <= ({last_at:${TIME}}, {last_id:UUID})`
      const result = await client.exec({
        query: fileQuery(
          `${w.sql} AND ${upTo}`,
          `${where(scope, after, false).sql} AND ${upTo}`,
          FILE_FORMATS[format].clickhouse,
        ),
        query_params: { ...w.params, last_at: clickHouseTime(last.createdAtMs), last_id: last.requestId },
        clickhouse_settings: settings,
        // Covers reading the stream too: a file that does not arrive in time fails the attempt.
        abort_signal: deadline(signal),
      })
      return result.stream
    },

    /** How many rows the scope holds now. */
    async count(scope: ExportScope, signal: AbortSignal): Promise<number> {
      const w = where(scope, null)
      const [found] = counted.parse(
        await rows(`SELECT count() AS rows FROM ${REQUEST_TABLE} FINAL WHERE ${w.sql}`, w.params, signal),
      )
      return found?.rows ?? 0
    },
  }
}

export type ExportQueries = ReturnType<typeof createExportQueries>
