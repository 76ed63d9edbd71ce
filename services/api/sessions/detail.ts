import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { type QueryLimits, readRows } from '../../shared/clickhouse/query-limits.ts'
import {
  READ_SETTINGS,
  REQUEST_TABLE,
  type RequestRow,
  requestRowSchema,
} from '../../shared/clickhouse/request-table.ts'
import { columnsFor, type RecordField, type RequestRecord, toRecord } from '../requests/interface.ts'
import { totalsStatement } from './sql.ts'

/** At most this many requests of one session are answered (the first ones in time order). */
export const SESSION_DETAIL_LIMIT = 1000

/**
 * What a session's request list shows of each request, under the request record's names; the
 * columns, their types and how they read back all come from request-table.ts.
 */
export const DETAIL_FIELDS = [
  'request_id',
  'created_at',
  'completed_at',
  'latency_ms',
  'provider',
  'model',
  'status',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost_usd',
  'user_id',
  'session_name',
  'session_path',
  'trace_id',
  'span_id',
  'parent_span_id',
] as const satisfies readonly RecordField[]

const DETAIL_COLUMNS = columnsFor(DETAIL_FIELDS, false)

/** A row read back, checked against the table's definition (times as Dates). */
const detailRow = requestRowSchema.pick(
  Object.fromEntries(DETAIL_COLUMNS.map((c) => [c, true])) as { [C in keyof RequestRow]?: true },
)

type DetailRow = Pick<RequestRecord, (typeof DETAIL_FIELDS)[number]>

const totalsRow = z.object({
  latest_session_name: z.string(),
  session_total_requests: z.number().int(),
  session_total_cost: z.number(),
  session_total_tokens: z.number().int(),
})

export interface SessionDetail {
  /** Over every request of the session, however many are listed. */
  totals: z.output<typeof totalsRow>
  /** The session's first requests in time order: one more than the limit, to tell truncation. */
  rows: DetailRow[]
}

/** A session's totals and its first requests; null when it has none. */
export function createSessionDetailRepo(client: ClickHouseClient, limits: QueryLimits) {
  return async (organizationId: string, sessionId: string): Promise<SessionDetail | null> => {
    const [totals] = totalsRow.array().parse(
      await readRows(client, limits, {
        ...totalsStatement(organizationId, sessionId),
        clickhouse_settings: READ_SETTINGS,
      }),
    )
    if (!totals || totals.session_total_requests === 0) return null
    const rows = await readRows(client, limits, {
      query: `SELECT ${DETAIL_COLUMNS.join(', ')}
              FROM ${REQUEST_TABLE} FINAL
              WHERE organization_id = {organization_id:UUID} AND session_id = {session_id:String}
              ORDER BY request_created_at ASC, request_id ASC
              LIMIT {limit:UInt32}`,
      query_params: {
        organization_id: organizationId,
        session_id: sessionId,
        limit: SESSION_DETAIL_LIMIT + 1,
      },
      clickhouse_settings: READ_SETTINGS,
    })
    return {
      totals,
      rows: detailRow
        .array()
        .parse(rows)
        .map((row) => toRecord(row, DETAIL_FIELDS) as DetailRow),
    }
  }
}

export type SessionDetailRepo = ReturnType<typeof createSessionDetailRepo>

export interface TreeNode {
  parent_request_id: string | null
  depth: number
}

/** The parent segment list of a session path: "/a/b/" → ["a", "b"]. */
const segments = (path: string) => path.split('/').filter(Boolean)

/**
 * Each request's parent in the session's tree, in input (time) order. A request recorded from a
 * span has the request of its parent span as parent (same trace), if that span is one of the
 * session's requests. Otherwise, by session_path: the earliest request whose path is the nearest
 * proper prefix of its own ("/a/b" under "/a"), the way Helicone shows paths. Otherwise a root.
 * Parents always come before their children in time, so the walk cannot loop.
 */
export function buildTree(rows: readonly DetailRow[]): TreeNode[] {
  const bySpan = new Map<string, number>()
  const byPath = new Map<string, number>()
  const nodes: TreeNode[] = []
  rows.forEach((row, i) => {
    let parent: number | undefined
    if (row.span_id && row.parent_span_id) parent = bySpan.get(`${row.trace_id}:${row.parent_span_id}`)
    if (parent === undefined && row.session_path) {
      const parts = segments(row.session_path)
      for (let n = parts.length - 1; n >= 0 && parent === undefined; n--) {
        parent = byPath.get(parts.slice(0, n).join('/'))
      }
    }
    const parentNode = parent === undefined ? undefined : nodes[parent]
    nodes.push({
      parent_request_id: parent === undefined ? null : (rows[parent] as DetailRow).request_id,
      depth: parentNode ? parentNode.depth + 1 : 0,
    })
    if (row.span_id) bySpan.set(`${row.trace_id}:${row.span_id}`, i)
    if (row.session_path) {
      const key = segments(row.session_path).join('/')
      if (!byPath.has(key)) byPath.set(key, i)
    }
  })
  return nodes
}
