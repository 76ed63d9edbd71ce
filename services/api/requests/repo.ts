import { ROW_COLUMNS } from '../../ingest/rows.ts'
import type { ClickHouseClient } from '../../shared/clickhouse.ts'
import type { CompiledFilter } from '../filters/compile.ts'

export const REQUEST_TABLE = 'request_response_rmt'

/** Sortable fields of a request query and their columns. */
export const SORT_COLUMNS = {
  created_at: 'request_created_at',
  completed_at: 'response_created_at',
  latency: 'latency',
  time_to_first_token: 'time_to_first_token',
  cost: 'cost',
  prompt_tokens: 'prompt_tokens',
  completion_tokens: 'completion_tokens',
  total_tokens: 'total_tokens',
  model: 'model',
  provider: 'provider',
  status: 'status',
  user_id: 'user_id',
} as const

export type SortField = keyof typeof SORT_COLUMNS

export interface RequestRow {
  request_id: string
  request_created_at: string
  response_created_at: string
  latency: number
  time_to_first_token: number | null
  provider: string
  model: string
  status: number
  target_url: string
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  cost: number
  cached: boolean
  user_id: string
  session_id: string
  session_name: string
  session_path: string
  properties: Record<string, string>
  prompt_id: string
  prompt_version: string
  request_body?: string
  response_body?: string
}

// Every column the ingest writes, but the organization (always the caller's) and the bodies (on request).
const COLUMNS = ROW_COLUMNS.filter(
  (c) => c !== 'organization_id' && c !== 'request_body' && c !== 'response_body',
).join(', ')

const columns = (includeBody: boolean) => (includeBody ? `${COLUMNS}, request_body, response_body` : COLUMNS)

// FINAL collapses redelivered copies (same sorting key). A request id is always in one month
// partition (the key holds its created_at), so FINAL need not merge across partitions.
const FINAL_SETTINGS = { do_not_merge_across_partitions_select_final: 1 } as const

export function createRequestRepo(client: ClickHouseClient) {
  async function rows<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
    const rs = await client.query({
      query,
      query_params: params,
      format: 'JSONEachRow',
      clickhouse_settings: FINAL_SETTINGS,
    })
    return rs.json<T>()
  }

  return {
    /** One page of the organization's requests matching the compiled filter. */
    async query(input: {
      organizationId: string
      filter: CompiledFilter
      sort: { field: SortField; direction: 'asc' | 'desc' }
      offset: number
      limit: number
      includeBody: boolean
    }): Promise<RequestRow[]> {
      const direction = input.sort.direction === 'asc' ? 'ASC' : 'DESC'
      // Column and direction come from the two closed lists above, never from the caller's text.
      return rows<RequestRow>(
        `SELECT ${columns(input.includeBody)}
         FROM ${REQUEST_TABLE} FINAL
         WHERE organization_id = {organization_id:UUID} AND (${input.filter.sql})
         ORDER BY ${SORT_COLUMNS[input.sort.field]} ${direction}, request_id ${direction}
         LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        {
          ...input.filter.params,
          organization_id: input.organizationId,
          limit: input.limit,
          offset: input.offset,
        },
      )
    },

    /** The newest version of one request, or undefined (also for another organization's id). */
    async get(organizationId: string, requestId: string): Promise<RequestRow | undefined> {
      const found = await rows<RequestRow>(
        `SELECT ${columns(true)}
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
    async createdAtOf(organizationId: string, requestIds: string[]): Promise<Map<string, Date>> {
      if (requestIds.length === 0) return new Map()
      const found = await rows<{ request_id: string; created_at: string }>(
        `SELECT request_id, toUnixTimestamp64Milli(min(request_created_at)) AS created_at
         FROM ${REQUEST_TABLE}
         WHERE organization_id = {organization_id:UUID} AND request_id IN {ids:Array(UUID)}
         GROUP BY request_id`,
        { organization_id: organizationId, ids: requestIds },
      )
      return new Map(found.map((r) => [r.request_id, new Date(Number(r.created_at))]))
    },
  }
}

export type RequestRepo = ReturnType<typeof createRequestRepo>
