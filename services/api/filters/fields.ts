/**
 * The filter language's vocabulary: which tables and fields a filter may name, their types, and
 * the operators each type takes. docs/sessions.md renders the same lists for callers.
 */

export type FieldType = 'text' | 'number' | 'timestamp' | 'boolean'

export interface FieldDef {
  /** A column of request_response_rmt, or an aggregate alias of the session query. */
  column: string
  type: FieldType
  /** request_id is a UUID column: equality binds a UUID (and uses the index), patterns its text. */
  uuid?: boolean
}

export const OPERATORS: Record<FieldType, readonly string[]> = {
  text: ['equals', 'not-equals', 'like', 'ilike', 'contains', 'not-contains'],
  number: ['equals', 'not-equals', 'gt', 'gte', 'lt', 'lte'],
  timestamp: ['equals', 'gt', 'gte', 'lt', 'lte'],
  boolean: ['equals'],
}

export const REQUEST_TABLE = 'request_response_rmt'
export const SESSION_TABLE = 'sessions_request_response_rmt'
/** `{properties: {...}}` at the top of a leaf: shorthand for the request table's properties field. */
export const PROPERTIES = 'properties'

const text = (column: string): FieldDef => ({ column, type: 'text' })
const number = (column: string): FieldDef => ({ column, type: 'number' })
const timestamp = (column: string): FieldDef => ({ column, type: 'timestamp' })

/** Request-level fields; `properties` is handled apart because it is keyed by property name. */
export const REQUEST_FIELDS: ReadonlyMap<string, FieldDef> = new Map([
  ['request_id', { column: 'request_id', type: 'text', uuid: true }],
  ['created_at', timestamp('request_created_at')],
  ['request_created_at', timestamp('request_created_at')],
  ['response_created_at', timestamp('response_created_at')],
  ['model', text('model')],
  ['provider', text('provider')],
  ['status', number('status')],
  ['latency', number('latency')],
  ['time_to_first_token', number('time_to_first_token')],
  ['cost', number('cost')],
  ['prompt_tokens', number('prompt_tokens')],
  ['completion_tokens', number('completion_tokens')],
  ['total_tokens', number('total_tokens')],
  ['user_id', text('user_id')],
  ['cached', { column: 'cached', type: 'boolean' }],
  ['prompt_id', text('prompt_id')],
  ['prompt_version', text('prompt_version')],
  ['prompt_version_id', text('prompt_version')],
  ['target_url', text('target_url')],
  ['request_body', text('request_body')],
  ['response_body', text('response_body')],
  ['session_id', text('session_id')],
  ['session_name', text('session_name')],
  ['session_path', text('session_path')],
])

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
