import type { ClickHouseClient } from '../../shared/clickhouse.ts'
import {
  countStatement,
  newestPageIdsStatement,
  pageIdsStatement,
  pageStatement,
  type SessionQuery,
  type Statement,
} from './sql.ts'

/** A session row as ClickHouse returns it: times in UTC ISO, numbers as JSON numbers. */
export interface SessionRow {
  session_id: string
  latest_session_name: string
  session_created_at: string
  session_latest_request_created_at: string
  session_total_cost: number
  session_total_requests: number
  session_prompt_tokens: number
  session_completion_tokens: number
  session_total_tokens: number
  session_avg_latency: number
  user_ids: string[]
}

interface PageRow {
  session_id: string
  session_created_at: string
  session_latest_request_created_at: string
}

export function createSessionRepo(client: ClickHouseClient) {
  return {
    /** Two passes (services/api/sessions/sql.ts): the page's ids, then their aggregates. */
    async page(query: SessionQuery): Promise<SessionRow[]> {
      const ids = async (statement: Statement) =>
        (await client.query({ ...statement, format: 'JSONEachRow' })).json<PageRow>()
      const newest = newestPageIdsStatement(query)
      let page = newest ? await ids(newest) : []
      if (page.length < query.limit) page = await ids(pageIdsStatement(query))
      if (page.length === 0) return []
      // ISO 8601 UTC text of one format sorts like the instants it names.
      const from = page.map((r) => r.session_created_at).sort()[0] as string
      const to = page.map((r) => r.session_latest_request_created_at).sort()[page.length - 1] as string
      const rs = await client.query({
        ...pageStatement(query, { ids: page.map((r) => r.session_id), from, to }),
        format: 'JSONEachRow',
      })
      return rs.json<SessionRow>()
    },

    async count(query: SessionQuery): Promise<number> {
      const rs = await client.query({ ...countStatement(query), format: 'JSONEachRow' })
      const [row] = await rs.json<{ count: number }>()
      return Number(row?.count ?? 0)
    },
  }
}

export type SessionRepo = ReturnType<typeof createSessionRepo>
