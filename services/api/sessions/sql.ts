import { SESSION_ROLLUP_TABLE, SESSION_TOTALS } from '../../shared/clickhouse/request-hours.ts'
import { REQUEST_TABLE } from '../../shared/clickhouse/request-table.ts'
import { compileSessionFilter } from '../../shared/filters/compile.ts'
import { freshHoursStatement, inRanges, newestBuild, splitWindow, usableSplit } from '../rollups/interface.ts'

export const SORT_FIELDS = [
  'created_at',
  'latest_request_created_at',
  'total_cost',
  'total_requests',
  'avg_latency',
] as const
export type SortField = (typeof SORT_FIELDS)[number]

export interface SessionQuery {
  organizationId: string
  startMs: number
  endMs: number
  search?: string
  nameEquals?: string
  filter: unknown
  sort: { field: SortField; direction: 'asc' | 'desc' }
  offset: number
  limit: number
  /** A keyset position: the sort value and session id of the last session already answered. */
  after?: [value: string | number, sessionId: string]
}

/**
 * Every session aggregate under the alias the filter compiler's session-level leaves name
 * (services/shared/filters/fields.ts). total_tokens is prompt plus completion, as spec 2.5 says.
 */
const AGGREGATES: Record<string, string> = {
  session_created_at: 'min(request_created_at)',
  session_latest_request_created_at: 'max(request_created_at)',
  // Finite whatever is stored (rows from before costs were bounded could overflow a sum to inf).
  session_total_cost: 'least(sum(cost), 1.7976931348623157e308)',
  session_total_requests: 'count()',
  session_prompt_tokens: 'sum(prompt_tokens)',
  session_completion_tokens: 'sum(completion_tokens)',
  session_total_tokens: 'sum(prompt_tokens) + sum(completion_tokens)',
  session_avg_latency: 'avg(latency)',
}

const SORT_ALIASES: Record<SortField, string> = {
  created_at: 'session_created_at',
  latest_request_created_at: 'session_latest_request_created_at',
  total_cost: 'session_total_cost',
  total_requests: 'session_total_requests',
  avg_latency: 'session_avg_latency',
}

export interface Statement {
  query: string
  query_params: Record<string, unknown>
}

/** The request-level conditions and the session-level HAVING shared by the page and the count. */
function conditions(q: SessionQuery) {
  const compiled = compileSessionFilter(q.filter)
  const params: Record<string, unknown> = {
    ...compiled.params,
    org: q.organizationId,
    start: q.startMs,
    end: q.endMs,
  }
  const where = [
    'organization_id = {org:UUID}',
    "request_created_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')",
    "request_created_at < fromUnixTimestamp64Milli({end:Int64}, 'UTC')",
    "session_id != ''",
  ]
  if (q.search) {
    params.search = q.search
    where.push(
      '(positionCaseInsensitiveUTF8(session_id, {search:String}) > 0 OR positionCaseInsensitiveUTF8(session_name, {search:String}) > 0)',
    )
  }
  if (q.nameEquals !== undefined) {
    params.name = q.nameEquals
    where.push('session_name = {name:String}')
  }
  if (compiled.where !== 'true') where.push(compiled.where)
  return {
    where: where.join('\n  AND '),
    having: compiled.having,
    /** Joined to the aggregated requests for aggregated score conditions; '' when none. */
    scoreJoin: compiled.scoreJoin ? `\n${compiled.scoreJoin}` : '',
    params,
    filtered: compiled.where !== 'true',
  }
}

/** Which of `names` the SQL `text` names, as whole words. */
const namedIn = (names: string[], text: string): string[] =>
  names.filter((name) => new RegExp(`\\b${name}\\b`).test(text))

/** Only the aggregates a HAVING clause names, so the cheap first pass stays cheap. */
function aggregatesFor(text: string, always: string[]): string {
  const named = new Set([...always, ...namedIn(Object.keys(AGGREGATES), text)])
  return Object.entries(AGGREGATES)
    .filter(([alias]) => named.has(alias))
    .map(([alias, sql]) => `${sql} AS ${alias}`)
    .join(', ')
}

const HOUR = 3_600_000
const TIME_SORTS: SortField[] = ['created_at', 'latest_request_created_at']

/**
 * The session_hours rollup (schemas/clickhouse/0002_sessions.sql) answers when nothing but the
 * window narrows the requests and only first/last request times matter: whole hours come from the
 * rollup, the window's partial first and last hours from the requests themselves.
 */
function rollupSource(q: SessionQuery, c: { having: string; filtered: boolean }) {
  if (q.search || q.nameEquals !== undefined || c.filtered || c.having !== 'true') return null
  const hourStart = Math.ceil(q.startMs / HOUR) * HOUR
  const hourEnd = Math.floor(q.endMs / HOUR) * HOUR
  // The rollup's hours are DateTime (1970 to 2106); windows reaching beyond read the requests.
  if (hourEnd <= hourStart || hourStart < 0 || hourEnd >= 2 ** 32 * 1000) return null
  const edges = partialHours(q, hourStart, hourEnd)
  const sql = `
    SELECT session_id, first_request_at AS first_at, last_request_at AS last_at
    FROM session_hours
    WHERE ${WINDOW_HOURS}${
      edges.either
        ? `
    UNION ALL${requestsIn('session_id, request_created_at AS first_at, request_created_at AS last_at', edges.either)}`
        : ''
    }`
  return {
    sql,
    edges,
    params: {
      hour_start: hourStart / 1000,
      hour_end: hourEnd / 1000,
      hour_start_ms: hourStart,
      hour_end_ms: hourEnd,
    },
  }
}

/** The organization's session_hours rows of the window's whole hours (rollupSource's params). */
const WINDOW_HOURS = `organization_id = {org:UUID}
      AND hour >= toDateTime({hour_start:UInt32}, 'UTC') AND hour < toDateTime({hour_end:UInt32}, 'UTC')`

/**
 * The window's stretches before its first whole hour and after its last, as conditions on the
 * request time, each only when not empty (a window of whole hours reads no request), and `either`
 * of them.
 */
function partialHours(
  q: SessionQuery,
  hourStart: number,
  hourEnd: number,
): { before?: string; after?: string; either?: string } {
  const stretch = (from: string, to: string) =>
    `(request_created_at >= fromUnixTimestamp64Milli({${from}:Int64}, 'UTC') AND request_created_at < fromUnixTimestamp64Milli({${to}:Int64}, 'UTC'))`
  const before = q.startMs < hourStart ? stretch('start', 'hour_start_ms') : undefined
  const after = hourEnd < q.endMs ? stretch('hour_end_ms', 'end') : undefined
  const both = [before, after].filter((edge) => edge !== undefined)
  return {
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    ...(both.length > 0 ? { either: `(${both.join(' OR ')})` } : {}),
  }
}

/** `select` of each request of the organization's sessions in the stretch `when` names. */
const requestsIn = (select: string, when: string) => `
    SELECT ${select}
    FROM request_response_rmt
    WHERE organization_id = {org:UUID} AND session_id != '' AND ${when}`

/** How a cursor's value is read back into the sort alias's type. */
const KEY_PARAMS: Record<SortField, string> = {
  created_at: "fromUnixTimestamp64Milli({after_value:Int64}, 'UTC')",
  latest_request_created_at: "fromUnixTimestamp64Milli({after_value:Int64}, 'UTC')",
  total_cost: '{after_value:Float64}',
  total_requests: '{after_value:UInt64}',
  avg_latency: '{after_value:Float64}',
}

/** Sessions after the cursor in the page's order (the sort alias, then session_id ascending). */
function afterCursor(q: SessionQuery): { sql: string; params: Record<string, unknown> } {
  if (!q.after) return { sql: 'true', params: {} }
  const alias = SORT_ALIASES[q.sort.field]
  const value = KEY_PARAMS[q.sort.field]
  const op = q.sort.direction === 'asc' ? '>' : '<'
  return {
    sql: `(${alias} ${op} ${value} OR (${alias} = ${value} AND session_id > {after_id:String}))`,
    params: { after_value: q.after[0], after_id: q.after[1] },
  }
}

const orderOf = (q: SessionQuery) =>
  `${SORT_ALIASES[q.sort.field]} ${q.sort.direction === 'asc' ? 'ASC' : 'DESC'}, session_id ASC`

/**
 * Whether a first pass needs FINAL. A request written twice (redelivery) is the same row twice:
 * first/last times and which sessions exist come out the same either way, so only sums, counts
 * and averages need the merge-on-read that FINAL costs (it also turns off PREWHERE).
 */
function needsFinal(q: SessionQuery, having: string): boolean {
  if (!TIME_SORTS.includes(q.sort.field)) return true
  return namedIn(Object.keys(AGGREGATES), having).some((alias) => !alias.endsWith('_at'))
}

/**
 * The sessions rollup (session_hour_totals, built per closed hour by ingest: request-hours.ts)
 * answers lists sorted by cost, request count or latency, and lists with session-level conditions,
 * when no request-level condition, search or name narrows the requests: each session's hour rows
 * added up, with the window's other stretches (its partial
 * first and last hours, hours not built or written to since) grouped from the requests, FINAL.
 * Each aggregate below is the one AGGREGATES computes from the requests, over the rollup's columns.
 */
const OVER_TOTALS: Record<string, string> = {
  session_created_at: 'min(first_request_at)',
  session_latest_request_created_at: 'max(last_request_at)',
  session_total_cost: 'least(sum(cost), 1.7976931348623157e308)',
  session_total_requests: 'sum(requests)',
  session_prompt_tokens: 'sum(prompt_tokens)',
  session_completion_tokens: 'sum(completion_tokens)',
  session_total_tokens: 'sum(prompt_tokens) + sum(completion_tokens)',
  session_avg_latency: 'sum(latency_sum) / sum(requests)',
  latest_session_name: "argMaxIf(latest_name, latest_name_at, latest_name != '')",
  user_ids: 'groupUniqArrayArray(user_ids)',
}

/**
 * Whether the list reads the sessions rollup: nothing but the window and session-level conditions
 * (on the aggregates the rollup adds up), sorted by cost, count or latency, or by time with a
 * session-level condition. A count reads it for session-level conditions only (without them it
 * counts session_hours' sessions, whatever the sort).
 */
function totalsUsable(q: SessionQuery, counting = false): boolean {
  if (q.search || q.nameEquals !== undefined) return false
  const c = conditions(q)
  if (c.filtered || c.scoreJoin) return false
  if (c.having !== 'true') return true
  // Sorted by time with nothing but the window, session_hours answers for less.
  return !counting && !TIME_SORTS.includes(q.sort.field)
}

/**
 * The statement answering the window's whole hours the sessions rollup answers for (services/api/rollups/interface.ts),
 * or undefined when this list (or its count) does not read the rollup.
 */
export function totalsHoursStatement(q: SessionQuery, counting = false): Statement | undefined {
  return totalsUsable(q, counting)
    ? freshHoursStatement(SESSION_ROLLUP_TABLE, q.organizationId, q.startMs, q.endMs)
    : undefined
}

/**
 * Per session and stretch, the rollup's `columns`: the fresh hours' rows of their newest builds,
 * and the stale stretches grouped from the requests (FINAL); `only` narrows both to some sessions.
 * Null when the window is better read from the requests alone.
 */
function totalsSource(
  q: SessionQuery,
  freshHours: readonly number[],
  columns: string[],
  params: Record<string, unknown>,
  only = 'true',
): string | null {
  const window = splitWindow(q.startMs, q.endMs, freshHours)
  if (!usableSplit(window)) return null
  const rollupSide = `
    SELECT session_id, ${columns.join(', ')}
    FROM ${SESSION_ROLLUP_TABLE}
    WHERE organization_id = {org:UUID} AND ${newestBuild(SESSION_ROLLUP_TABLE, inRanges('hour', window.fresh, 'fresh', 'hour', params))}
      AND ${only}`
  if (window.stale.length === 0) return rollupSide
  return `${rollupSide}
    UNION ALL
    SELECT session_id, ${columns.map((c) => `${SESSION_TOTALS[c]} AS ${c}`).join(', ')}
    FROM ${REQUEST_TABLE} FINAL
    WHERE organization_id = {org:UUID} AND session_id != ''
      AND (${inRanges('request_created_at', window.stale, 'raw', 'ms', params)})
      AND ${only}
    GROUP BY session_id`
}

/** The rollup's columns `aliases` (OVER_TOTALS) read, and those aggregates over the source. */
function overTotals(aliases: string[]): { columns: string[]; select: string } {
  const select = aliases.map((a) => `${OVER_TOTALS[a]} AS ${a}`).join(', ')
  const columns = namedIn(Object.keys(SESSION_TOTALS), select)
  return { columns, select }
}

/**
 * The whole page from the sessions rollup in one statement, given the hours it answers for
 * (totalsHoursStatement's answer): the page's ids by the sort key alone, then every aggregate of
 * those sessions. Null when the list does not read the rollup, or the window is better read from
 * the requests (then the two passes below run).
 */
export function totalsPageStatement(q: SessionQuery, freshHours: readonly number[]): Statement | null {
  if (!totalsUsable(q)) return null
  const { having, params: filterParams } = conditions(q)
  const after = afterCursor(q)
  const params: Record<string, unknown> = {
    ...filterParams,
    ...after.params,
    limit: q.limit,
    offset: q.offset,
  }
  // The sort key and whatever a session-level filter names.
  const named = namedIn(Object.keys(AGGREGATES), having)
  const key = overTotals([...new Set([SORT_ALIASES[q.sort.field], ...named])])
  const all = overTotals(Object.keys(OVER_TOTALS))
  const ranked = totalsSource(q, freshHours, key.columns, params)
  const page = totalsSource(q, freshHours, all.columns, params, 'session_id IN (SELECT session_id FROM page)')
  if (!ranked || !page) return null
  return {
    query: `
WITH page AS (
  SELECT session_id, ${key.select}
  FROM (${ranked})
  GROUP BY session_id
  HAVING (${having}) AND ${after.sql}
  ORDER BY ${orderOf(q)}
  LIMIT {limit:UInt32} OFFSET {offset:UInt64})
SELECT session_id, ${all.select}
FROM (${page})
GROUP BY session_id
ORDER BY ${orderOf(q)}`,
    query_params: params,
  }
}

/**
 * How many sessions pass the session-level conditions, from the sessions rollup given the hours
 * it answers for (totalsHoursStatement with `counting`): the page's ranking without its order and
 * limit. Null when the count does not read the rollup, or the window is better read from the
 * requests (then countStatement).
 */
export function totalsCountStatement(q: SessionQuery, freshHours: readonly number[]): Statement | null {
  if (!totalsUsable(q, true)) return null
  const { having, params: filterParams } = conditions(q)
  const params: Record<string, unknown> = { ...filterParams }
  const key = overTotals([
    ...new Set(['session_total_requests', ...namedIn(Object.keys(AGGREGATES), having)]),
  ])
  const source = totalsSource(q, freshHours, key.columns, params)
  if (!source) return null
  return {
    query: `
SELECT count() AS count FROM (
  SELECT session_id, ${key.select}
  FROM (${source})
  GROUP BY session_id
  HAVING ${having})`,
    query_params: params,
  }
}

/**
 * First pass: the page's session ids, with their first and last request times so the second pass
 * reads only that stretch of the table. Only the sort key (and what a session-level filter names)
 * is aggregated.
 */
export function pageIdsStatement(q: SessionQuery): Statement {
  const c = conditions(q)
  const { where, having, params } = c
  const rollup = TIME_SORTS.includes(q.sort.field) ? rollupSource(q, c) : null
  const after = afterCursor(q)
  const paging = { ...params, ...after.params, limit: q.limit, offset: q.offset }
  const times = ['session_created_at', 'session_latest_request_created_at']
  if (rollup) {
    return {
      query: `
SELECT session_id, min(first_at) AS session_created_at, max(last_at) AS session_latest_request_created_at
FROM (${rollup.sql})
GROUP BY session_id
HAVING ${after.sql}
ORDER BY ${orderOf(q)}
LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      query_params: { ...paging, ...rollup.params },
    }
  }
  return {
    query: `
SELECT session_id, ${aggregatesFor(having, [SORT_ALIASES[q.sort.field], ...times])}
FROM request_response_rmt${needsFinal(q, having) || c.scoreJoin ? ' FINAL' : ''}${c.scoreJoin}
WHERE ${where}
GROUP BY session_id
HAVING (${having}) AND ${after.sql}
ORDER BY ${orderOf(q)}
LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    query_params: paging,
  }
}

/**
 * The default page (newest sessions first, nothing but the window) without grouping the whole
 * window: take the latest rollup rows until there are about twice as many as the page needs (the
 * cut), and group only the sessions those rows name, over all their rows in the window, keeping
 * those whose first hour is not before the cut (the others' first request is older). Every session
 * kept has its true first request after the cut, and every session not considered starts before
 * it, so when this fills the page it is the exact page. So is a page it does not fill when the cut
 * took every rollup row of the window and the window starts on a whole hour (`whole_window`:
 * nothing older was left out, a small organization's usual case); otherwise the caller runs
 * pageIdsStatement.
 */
export function newestPageIdsStatement(q: SessionQuery): Statement | null {
  if (q.sort.field !== 'created_at' || q.sort.direction !== 'desc' || q.after) return null
  const c = conditions(q)
  const rollup = rollupSource(q, c)
  if (!rollup) return null
  const { before, after, either } = rollup.edges
  // Each request of the partial hours as a row of its hour: before the first whole hour, so
  // before any cut, or after the last, so after every cut.
  const edgeRows = either
    ? `
    UNION ALL${requestsIn(
      "session_id, toStartOfHour(toDateTime(request_created_at, 'UTC')) AS hour, request_created_at AS first_at, request_created_at AS last_at",
      either,
    )}`
    : ''
  const named = `
    SELECT session_id FROM session_hours WHERE ${WINDOW_HOURS} AND hour >= cut${
      after
        ? `
    UNION ALL${requestsIn('session_id', after)}`
        : ''
    }`
  return {
    query: `
WITH (SELECT (min(hour), count()) FROM (SELECT hour FROM session_hours WHERE ${WINDOW_HOURS} ORDER BY hour DESC LIMIT {rows:UInt32})) AS latest,
  latest.1 AS cut
SELECT session_id, min(first_at) AS session_created_at, max(last_at) AS session_latest_request_created_at,
  ${before ? '0' : 'latest.2 < {rows:UInt32}'} AS whole_window
FROM (
    SELECT session_id, hour, first_request_at AS first_at, last_request_at AS last_at
    FROM session_hours WHERE ${WINDOW_HOURS}${edgeRows})
WHERE session_id IN (${named})
GROUP BY session_id
HAVING min(hour) >= cut
ORDER BY ${orderOf(q)}
LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
    query_params: {
      ...c.params,
      ...rollup.params,
      limit: q.limit,
      offset: q.offset,
      rows: 2 * (q.offset + q.limit) + 100,
    },
  }
}

export interface PageIds {
  ids: string[]
  /** The earliest first and the latest last request of the page's sessions, ClickHouse text. */
  from: string
  to: string
}

/** Second pass: every aggregate, for the page's sessions only, within their stretch of time. */
export function pageStatement(q: SessionQuery, page: PageIds): Statement {
  const { where, params } = conditions(q)
  return {
    query: `
SELECT
  session_id,
  argMaxIf(session_name, request_created_at, session_name != '') AS latest_session_name,
  ${aggregatesFor('', Object.keys(AGGREGATES))},
  groupUniqArrayIf(user_id, user_id != '') AS user_ids
FROM request_response_rmt FINAL
WHERE ${where}
  AND session_id IN {page_ids:Array(String)}
  AND request_created_at >= parseDateTime64BestEffort({page_from:String}, 3, 'UTC')
  AND request_created_at <= parseDateTime64BestEffort({page_to:String}, 3, 'UTC')
GROUP BY session_id
ORDER BY ${orderOf(q)}`,
    query_params: { ...params, page_ids: page.ids, page_from: page.from, page_to: page.to },
  }
}

/**
 * One session's totals over all its requests, with the very aggregates (and the same latest name)
 * the session list shows, so GET /v1/session/{id} and POST /v1/session/query agree on a session.
 */
export function totalsStatement(organizationId: string, sessionId: string): Statement {
  const totals = ['session_total_requests', 'session_total_cost', 'session_total_tokens']
  return {
    query: `
SELECT
  argMaxIf(session_name, request_created_at, session_name != '') AS latest_session_name,
  ${aggregatesFor('', totals)}
FROM request_response_rmt FINAL
WHERE organization_id = {org:UUID} AND session_id = {session_id:String}`,
    query_params: { org: organizationId, session_id: sessionId },
  }
}

/** How many sessions the same body would page through. */
export function countStatement(q: SessionQuery): Statement {
  const c = conditions(q)
  const { where, having, params } = c
  const rollup = rollupSource(q, c)
  if (rollup) {
    return {
      query: `SELECT uniqExact(session_id) AS count FROM (${rollup.sql})`,
      query_params: { ...params, ...rollup.params },
    }
  }
  const query =
    having === 'true'
      ? `SELECT uniqExact(session_id) AS count FROM request_response_rmt WHERE ${where}`
      : `SELECT count() AS count FROM (
  SELECT session_id, ${aggregatesFor(having, [])}
  FROM request_response_rmt FINAL${c.scoreJoin}
  WHERE ${where}
  GROUP BY session_id
  HAVING ${having})`
  return { query, query_params: params }
}
