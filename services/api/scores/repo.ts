import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { type QueryLimits, readRows } from '../../shared/clickhouse/query-limits.ts'
import { fromClickHouseTime } from '../../shared/timestamp.ts'
import type { SCORE_STATUSES, ScoreDataType, ScoreSource } from './schemas.ts'
import type { Target } from './service.ts'

const rowSchema = z.object({
  id: z.string(),
  target_kind: z.enum(['request', 'session']),
  request_id: z.string(),
  session_id: z.string(),
  name: z.string(),
  source: z.string(),
  data_type: z.enum(['numeric', 'boolean', 'categorical']),
  value: z.number(),
  string_value: z.string(),
  comment: z.string(),
  created_at: z.string(),
  created_ms: z.coerce.number(),
  status: z.enum(['applied', 'pending', 'orphaned']),
})

export interface StoredScore {
  id: string
  target: Target
  name: string
  value: number | boolean | string
  data_type: ScoreDataType
  source: string
  comment: string
  created_at: Date
  status: (typeof SCORE_STATUSES)[number]
  /** Unix ms of created_at: the page's sort key. */
  createdMs: number
}

export interface ScoreListQuery {
  organizationId: string
  id?: string | undefined
  requestId?: string | undefined
  sessionId?: string | undefined
  name?: string | undefined
  source?: ScoreSource | undefined
  status?: (typeof SCORE_STATUSES)[number] | undefined
  limit: number
  /** Newest first: after this (created_at ms, id). */
  after?: [number, string] | undefined
  graceMs: number
}

function toScore(row: z.output<typeof rowSchema>): StoredScore {
  return {
    id: row.id,
    target: row.target_kind === 'request' ? { request_id: row.request_id } : { session_id: row.session_id },
    name: row.name,
    value:
      row.data_type === 'boolean'
        ? row.value === 1
        : row.data_type === 'categorical'
          ? row.string_value
          : row.value,
    data_type: row.data_type,
    source: row.source,
    comment: row.comment,
    created_at: fromClickHouseTime(row.created_at),
    status: row.status,
    createdMs: row.created_ms,
  }
}

/**
 * Reads scores back from ClickHouse (the `scores` table, FINAL: the latest write of each id, the
 * deleted ones gone). A score's status says whether what it grades is stored: `applied` when it
 * is, else `pending` within the grace period from its creation, `orphaned` after it.
 */
export function createScoreRepo(client: ClickHouseClient, limits: QueryLimits) {
  return {
    async list(q: ScoreListQuery): Promise<StoredScore[]> {
      const where = ['organization_id = {org:UUID}', 'is_deleted = 0']
      const params: Record<string, unknown> = { org: q.organizationId, limit: q.limit, grace: q.graceMs }
      if (q.id) {
        where.push('id = {id:UUID}')
        params.id = q.id
      }
      if (q.requestId) {
        where.push("target_kind = 'request' AND request_id = {request_id:UUID}")
        params.request_id = q.requestId
      }
      if (q.sessionId) {
        where.push("target_kind = 'session' AND session_id = {session_id:String}")
        params.session_id = q.sessionId
      }
      if (q.name) {
        where.push('name = {name:String}')
        params.name = q.name
      }
      if (q.source) {
        where.push('source = {source:String}')
        params.source = q.source
      }
      if (q.after) {
        where.push(
          "(created_at < fromUnixTimestamp64Milli({after_ms:Int64}, 'UTC') OR (created_at = fromUnixTimestamp64Milli({after_ms:Int64}, 'UTC') AND id > {after_id:UUID}))",
        )
        params.after_ms = q.after[0]
        params.after_id = q.after[1]
      }
      // The statuses need the targets' existence: one look-up per kind, limited to the targets
      // of the scores read.
      const selected = `SELECT * FROM scores FINAL WHERE ${where.join(' AND ')}`
      const status = `multiIf(
          target_kind = 'request' AND request_id IN (
            SELECT request_id FROM request_response_rmt WHERE organization_id = {org:UUID}
              AND request_id IN (SELECT request_id FROM (${selected}) WHERE target_kind = 'request')), 'applied',
          target_kind = 'session' AND session_id IN (
            SELECT session_id FROM request_response_rmt WHERE organization_id = {org:UUID}
              AND session_id IN (SELECT session_id FROM (${selected}) WHERE target_kind = 'session')), 'applied',
          created_at >= now64(3) - toIntervalMillisecond({grace:UInt64}), 'pending',
          'orphaned')`
      const query = `
SELECT toString(id) AS id, toString(target_kind) AS target_kind, toString(request_id) AS request_id, session_id,
  name, source, toString(data_type) AS data_type, value, string_value, comment, created_at,
  toUnixTimestamp64Milli(created_at) AS created_ms, ${status} AS status
FROM (${selected})
${q.status ? 'WHERE status = {status:String}' : ''}
ORDER BY created_at DESC, id ASC
LIMIT {limit:UInt32}`
      if (q.status) params.status = q.status
      const rows = await readRows(client, limits, { query, query_params: params })
      return rowSchema.array().parse(rows).map(toScore)
    },
  }
}
