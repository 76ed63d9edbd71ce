/**
 * The filter language's vocabulary: which tables and fields a filter may name, their types, and
 * the operators each type takes. docs/sessions.md renders the same lists for callers.
 */
import { FILTER_FIELDS, type FilterType } from '../clickhouse/request-table.ts'
import type { RequestEvent } from '../events/request-event.ts'

export interface FieldDef {
  /** A column of request_response_rmt, or an aggregate alias of the session query. */
  column: string
  type: FilterType
  /** request_id is a UUID column: equality binds a UUID (and uses the index), patterns its text. */
  uuid?: boolean
  /** The request event's field written into the column (request-level fields). */
  event?: keyof RequestEvent
}

export const OPERATORS: Record<FilterType, readonly string[]> = {
  text: ['equals', 'not-equals', 'like', 'ilike', 'contains', 'not-contains'],
  number: ['equals', 'not-equals', 'gt', 'gte', 'lt', 'lte'],
  timestamp: ['equals', 'gt', 'gte', 'lt', 'lte'],
  boolean: ['equals'],
}

/**
 * Operators are spelled with hyphens (Helicone's spelling); the snake_case spelling is taken as
 * the same operator.
 */
export const OPERATOR_ALIASES: ReadonlyMap<string, string> = new Map([
  ['not_equals', 'not-equals'],
  ['not_contains', 'not-contains'],
])

export const SESSION_TABLE = 'sessions_request_response_rmt'
/** `{properties: {...}}` at the top of a leaf: shorthand for the request table's properties field. */
export const PROPERTIES = 'properties'
/** `{scores: {name: condition}}`: a request's scores (a session's, under the session table). */
export const SCORES = 'scores'
/** `{feedback: condition}`: the boolean score named feedback (Helicone's rating). */
export const FEEDBACK = 'feedback'

export type ScoreAggregate = 'avg' | 'min' | 'max'
/** Session-level `{avg_score: {name: condition}}`…: over the scores of the session's chosen requests. */
export const SCORE_AGGREGATES: Readonly<Record<string, ScoreAggregate>> = {
  avg_score: 'avg',
  min_score: 'min',
  max_score: 'max',
}

/**
 * Request-level fields, from the table's definition (services/shared/clickhouse/request-table.ts);
 * `properties` is handled apart because it is keyed by property name.
 */
export const REQUEST_FIELDS: ReadonlyMap<string, FieldDef> = FILTER_FIELDS

const number = (column: string): FieldDef => ({ column, type: 'number' })
const timestamp = (column: string): FieldDef => ({ column, type: 'timestamp' })

/**
 * Session-level fields, applied after aggregation. Their columns are the aliases the session
 * query gives its aggregates (services/api/sessions/sql.ts).
 */
export const SESSION_FIELDS: ReadonlyMap<string, FieldDef> = new Map([
  ['session_total_cost', number('session_total_cost')],
  ['session_total_requests', number('session_total_requests')],
  ['session_total_tokens', number('session_total_tokens')],
  ['session_avg_latency', number('session_avg_latency')],
  ['session_created_at', timestamp('session_created_at')],
  ['session_latest_request_created_at', timestamp('session_latest_request_created_at')],
])
