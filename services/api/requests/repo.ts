import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { type QueryLimits, readRows } from '../../shared/clickhouse/query-limits.ts'
import {
  READ_SETTINGS,
  REQUEST_TABLE,
  type RequestRow,
  readColumns,
  requestRowSchema,
  SORT_COLUMNS,
  type SortField,
} from '../../shared/clickhouse/request-table.ts'
import type { CompiledFilter } from '../../shared/filters/compile.ts'
import { TIME_RANGE } from '../../shared/timestamp.ts'
import type { CursorKey } from '../http/cursor.ts'
import { sortKey } from './keyset.ts'

const rowsSchema = requestRowSchema.array()
const createdAtSchema = z.object({ request_id: z.string(), created_at: z.number() }).array()

const HOUR = 3_600_000
/** How far from where a page starts the first reads look, widening until one fills the page. */
const WINDOWS = [HOUR, 24 * HOUR, 30 * 24 * HOUR]

/**
 * Time windows a page by created_at can be read from before the whole table: ClickHouse does not
 * read a FINAL table in sort order, so an unbounded page sorts every row older (or newer) than its
 * start. The rows of a window next to the page's start that fill the page are the page: every row
 * outside it is further from the start. Newest first without a cursor starts at now (later rows are
 * inside every window); oldest first needs a cursor to start from; offsets read the table.
 */
function timeWindows(input: {
  sort: { field: SortField; direction: 'asc' | 'desc' }
  offset: number
  after?: CursorKey
}): { op: '>=' | '<='; ms: number }[] {
  if (input.sort.field !== 'created_at' || input.offset > 0) return []
  const from = input.after
    ? (input.after[0] as number)
    : input.sort.direction === 'desc'
      ? Date.now()
      : undefined
  if (from === undefined) return []
  // Within DateTime64(3)'s range, where ClickHouse compares times as times.
  const clamp = (ms: number) => Math.min(Math.max(ms, TIME_RANGE.minMs), TIME_RANGE.maxMs)
  return WINDOWS.map((w) =>
    input.sort.direction === 'desc' ? { op: '>=', ms: clamp(from - w) } : { op: '<=', ms: clamp(from + w) },
  )
}

/** Every read runs for a caller, so every read carries the query limits. */
export function createRequestRepo(client: ClickHouseClient, limits: QueryLimits) {
  // A read Tally stops waiting for (at `deadlineMs`) is stopped in ClickHouse too.
  const rows = (query: string, params: Record<string, unknown>, deadlineMs = limits.deadlineMs) =>
    readRows(
      client,
      { ...limits, deadlineMs: Math.min(deadlineMs, limits.deadlineMs) },
      { query, query_params: params, clickhouse_settings: READ_SETTINGS },
    )
  const requests = async (query: string, params: Record<string, unknown>) =>
    rowsSchema.parse(await rows(query, params))

  return {
    /**
     * One page of the organization's requests matching the compiled filter: after `after` (a
     * keyset position, see keyset.ts) or past `offset` rows. `columns` are what the caller asked
     * for; the sort column and request_id are read as well, for the next cursor.
     */
    async query(input: {
      organizationId: string
      filter: CompiledFilter
      sort: { field: SortField; direction: 'asc' | 'desc' }
      offset: number
      limit: number
      columns: readonly string[]
      after?: CursorKey
    }): Promise<Partial<RequestRow>[]> {
      const key = sortKey(input.sort.field, input.sort.direction)
      const direction = input.sort.direction === 'asc' ? 'ASC' : 'DESC'
      const columns = [...new Set([...input.columns, SORT_COLUMNS[input.sort.field], 'request_id'])]
      const params: Record<string, unknown> = {
        ...input.filter.params,
        organization_id: input.organizationId,
        limit: input.limit,
        offset: input.offset,
      }
      let after = ''
      if (input.after) {
        const [value, id] = input.after
        const op = direction === 'ASC' ? '>' : '<'
        params.after_value = value
        params.after_id = id
        // The first comparison alone is the keyset; the second lets the primary key prune.
        after = `AND (${key.expr}, request_id) ${op} (${key.param}, {after_id:UUID})
           AND ${key.expr} ${op}= ${key.param}`
      }
      // Columns, expressions and direction come from closed lists, never from the caller's text.
      const page = (window: string) =>
        rows(
          `SELECT ${columns.join(', ')}
         FROM ${REQUEST_TABLE} FINAL
         WHERE organization_id = {organization_id:UUID} AND (${input.filter.sql}) ${after} ${window}
         ORDER BY ${key.expr} ${direction}, request_id ${direction}
         LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
          params,
        )
      let found: unknown[] | undefined
      for (const bound of timeWindows(input)) {
        params.window_bound = bound.ms
        const rowsIn = await page(
          `AND request_created_at ${bound.op} fromUnixTimestamp64Milli({window_bound:Int64}, 'UTC')`,
        )
        if (rowsIn.length >= input.limit) {
          found = rowsIn
          break
        }
      }
      found ??= await page('')
      const picked = requestRowSchema.pick(
        Object.fromEntries(columns.map((c) => [c, true])) as Record<keyof RequestRow, true>,
      )
      return picked.array().parse(found) as Partial<RequestRow>[]
    },

    /** The newest version of one request, or undefined (also for another organization's id). */
    async get(organizationId: string, requestId: string): Promise<RequestRow | undefined> {
      const found = await requests(
        `SELECT ${readColumns(true)}
         FROM ${REQUEST_TABLE} FINAL
         WHERE organization_id = {organization_id:UUID} AND request_id = {request_id:UUID}
         ORDER BY ingested_at DESC
         LIMIT 1`,
        { organization_id: organizationId, request_id: requestId },
      )
      return found[0]
    },

    /**
     * created_at of the given ids already stored for the organization. A re-sent id keeps its
     * first created_at so that its sorting key, and so its row, is the one it replaces.
     */
    async createdAtOf(
      organizationId: string,
      requestIds: string[],
      timeoutMs: number = limits.deadlineMs,
    ): Promise<Map<string, Date>> {
      if (requestIds.length === 0) return new Map()
      const found = createdAtSchema.parse(
        await rows(
          `SELECT request_id, toUnixTimestamp64Milli(min(request_created_at)) AS created_at
         FROM ${REQUEST_TABLE}
         WHERE organization_id = {organization_id:UUID} AND request_id IN {ids:Array(UUID)}
         GROUP BY request_id`,
          { organization_id: organizationId, ids: requestIds },
          timeoutMs,
        ),
      )
      return new Map(found.map((r) => [r.request_id, new Date(r.created_at)]))
    },
  }
}

export type RequestRepo = ReturnType<typeof createRequestRepo>
