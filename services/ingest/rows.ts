import type { RequestEvent } from '../shared/events/request-event.ts'

/** ClickHouse DateTime64(3, 'UTC') text form. */
export function chTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '')
}

/** One request_response_rmt row (schemas/clickhouse/README.md) from one event. */
export function toRow(e: RequestEvent) {
  return {
    organization_id: e.organization_id,
    request_id: e.request_id,
    request_created_at: chTime(e.created_at),
    response_created_at: chTime(e.completed_at),
    latency: e.latency_ms,
    time_to_first_token: e.time_to_first_token_ms,
    provider: e.provider,
    model: e.model,
    status: e.status,
    target_url: e.target_url,
    prompt_tokens: e.prompt_tokens,
    completion_tokens: e.completion_tokens,
    total_tokens: e.total_tokens,
    cost: e.cost_usd,
    cached: e.cached,
    user_id: e.user_id,
    session_id: e.session_id,
    session_name: e.session_name,
    session_path: e.session_path,
    properties: e.properties,
    prompt_id: e.prompt_id,
    prompt_version: e.prompt_version_id,
    request_body: e.request_body,
    response_body: e.response_body,
  }
}

type Row = ReturnType<typeof toRow>

/** The columns of every insert, in the order of {@link toCompactRow}'s values. */
export const ROW_COLUMNS = [
  'organization_id',
  'request_id',
  'request_created_at',
  'response_created_at',
  'latency',
  'time_to_first_token',
  'provider',
  'model',
  'status',
  'target_url',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost',
  'cached',
  'user_id',
  'session_id',
  'session_name',
  'session_path',
  'properties',
  'prompt_id',
  'prompt_version',
  'request_body',
  'response_body',
] as const satisfies readonly (keyof Row)[]

// Does not compile when toRow gains a column that ROW_COLUMNS lacks.
type Missing = Exclude<keyof Row, (typeof ROW_COLUMNS)[number]>
export const ROW_COLUMNS_COMPLETE: [Missing] extends [never] ? true : never = true

/**
 * The row of {@link toRow} as values in {@link ROW_COLUMNS} order, for JSONCompactEachRow: no
 * column names repeated in every row, so less to serialise and for ClickHouse to parse.
 */
export function toCompactRow(e: RequestEvent): unknown[] {
  const row = toRow(e)
  return ROW_COLUMNS.map((c) => row[c])
}
