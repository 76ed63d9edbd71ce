import { z } from 'zod'
import type { ClickHouseClient } from '../../shared/clickhouse/client.ts'
import { type QueryLimits, readRows } from '../../shared/clickhouse/query-limits.ts'
import { readFreshHours } from '../rollups/interface.ts'
import {
  countStatement,
  newestPageIdsStatement,
  pageIdsStatement,
  pageStatement,
  type SessionQuery,
  type Statement,
  totalsCountStatement,
  totalsHoursStatement,
  totalsPageStatement,
} from './sql.ts'

/** A session row as ClickHouse returns it: times in UTC ISO, numbers as JSON numbers. */
const sessionRowSchema = z.object({
  session_id: z.string(),
  latest_session_name: z.string(),
  session_created_at: z.string(),
  session_latest_request_created_at: z.string(),
  session_total_cost: z.number(),
  session_total_requests: z.number().int(),
  session_prompt_tokens: z.number().int(),
  session_completion_tokens: z.number().int(),
  session_total_tokens: z.number().int(),
  session_avg_latency: z.number(),
  user_ids: z.array(z.string()),
})

export type SessionRow = z.output<typeof sessionRowSchema>

/** The first pass: a page's session ids and the window they span. */
const pageRowSchema = sessionRowSchema.pick({
  session_id: true,
  session_created_at: true,
  session_latest_request_created_at: true,
})

/** The newest-first shortcut's rows: whether they are the whole window's answer, too. */
const newestRowSchema = pageRowSchema.extend({ whole_window: z.number().int() })

const countSchema = z.object({ count: z.number().int() })

/** Each statement runs under the query limits: a session page is up to three of them. */
export function createSessionRepo(client: ClickHouseClient, limits: QueryLimits) {
  const rows = (statement: Statement) => readRows(client, limits, statement)
  /** The hours the sessions rollup answers for, when the list (or its count) reads it. */
  const freshHours = (query: SessionQuery, counting = false) =>
    readFreshHours(client, limits, totalsHoursStatement(query, counting))
  return {
    /**
     * Sorted by cost, count or latency, or narrowed by session-level conditions only: the hours
     * the sessions rollup answers for, then the page from it in one statement. Otherwise two passes
     * (services/api/sessions/sql.ts): the page's ids, then their aggregates.
     */
    async page(query: SessionQuery): Promise<SessionRow[]> {
      const hours = await freshHours(query)
      const totals = hours && totalsPageStatement(query, hours)
      if (totals) return sessionRowSchema.array().parse(await rows(totals))
      const ids = async (statement: Statement) => pageRowSchema.array().parse(await rows(statement))
      const newest = newestPageIdsStatement(query)
      const shortcut = newest ? newestRowSchema.array().parse(await rows(newest)) : []
      const whole = shortcut.length > 0 && shortcut.every((r) => r.whole_window === 1)
      const page = shortcut.length < query.limit && !whole ? await ids(pageIdsStatement(query)) : shortcut
      if (page.length === 0) return []
      // ISO 8601 UTC text of one format sorts like the instants it names.
      const from = page.map((r) => r.session_created_at).sort()[0] as string
      const to = page.map((r) => r.session_latest_request_created_at).sort()[page.length - 1] as string
      const statement = pageStatement(query, { ids: page.map((r) => r.session_id), from, to })
      return sessionRowSchema.array().parse(await rows(statement))
    },

    /** Narrowed by session-level conditions only: the rollup's hours, then the count from it. */
    async count(query: SessionQuery): Promise<number> {
      const hours = await freshHours(query, true)
      const totals = hours && totalsCountStatement(query, hours)
      const [row] = countSchema.array().parse(await rows(totals || countStatement(query)))
      return row?.count ?? 0
    },
  }
}

export type SessionRepo = ReturnType<typeof createSessionRepo>
