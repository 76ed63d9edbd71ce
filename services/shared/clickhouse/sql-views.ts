import { randomUUID } from 'node:crypto'
import type { ClickHouseClient } from '@clickhouse/client'
import { PROPERTY_UPDATE_TABLE, SCORE_TABLE } from './annotation-tables.ts'
import { type ClickHouseLayout, checkIdentifier, localTable, onCluster, SINGLE_NODE } from './cluster-ddl.ts'
import { PROPERTIES_TYPE, REQUEST_COLUMNS, REQUEST_TABLE } from './request-table.ts'

/**
 * What `POST /v1/sql/query` reads: views in a database of their own (`sql_<database>`), each
 * showing one organization's rows, deduplicated (FINAL), to the restricted ClickHouse user that
 * runs callers' SQL. The organization is the `X-Tally-Organization` header of the HTTP request
 * that runs the query (`getClientHTTPHeader`): Tally sets it from the caller's API key, and no SQL
 * text can change a header. The views run with their definer's rights (Tally's own user), so the
 * restricted user needs, and has, SELECT on these views only; see docs/data-teams.md.
 */

/** The header the views read the organization from. */
export const SQL_ORGANIZATION_HEADER = 'X-Tally-Organization'

/** The database of the views: the restricted user may read `sql_*` databases and nothing else. */
export const sqlViewsDatabase = (database: string) => `sql_${database}`

const ORGANIZATION = `organization_id = toUUIDOrZero(getClientHTTPHeader('${SQL_ORGANIZATION_HEADER}'))`

/**
 * The id of a caller's query: `tally-sql.<organization>.<random>`. On a cluster a shard never sees
 * the HTTP request's headers, but every shard is told the id of the query that started its part
 * (`initialQueryID()`), and no SQL text can change a query's id: only Tally's runner sets it.
 */
export const sqlQueryId = (organizationId: string) => `${QUERY_ID_PREFIX}${organizationId}.${randomUUID()}`
const QUERY_ID_PREFIX = 'tally-sql.'

/** On a cluster's nodes: the organization is the one the initial query's id names, in the form sqlQueryId gives. */
const ORGANIZATION_OF_QUERY =
  "match(initialQueryID(), '^tally-sql[.][0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[.]') AND " +
  `organization_id = toUUIDOrZero(substring(initialQueryID(), ${QUERY_ID_PREFIX.length + 1}, 36))`

interface ViewColumn {
  name: string
  description: string
}

export interface SqlView {
  name: string
  description: string
  columns: readonly ViewColumn[]
  /** The SELECT over Tally's database `db`, filtered to the header's organization. */
  select(db: string): string
  /**
   * On a cluster: the same answer from the views' database `views`, whose CLUSTER_PARTS hold each
   * node's rows of the organization (CLUSTER_PARTS: why).
   */
  clusterSelect(views: string): string
}

/** What each column of request_response_rmt means; schemas/clickhouse/README.md says the same. */
const REQUEST_COLUMN_DESCRIPTIONS: Record<string, string> = {
  request_id: "The request's id.",
  request_created_at: 'When the model request was sent (UTC, milliseconds).',
  response_created_at: 'When the response ended (UTC, milliseconds).',
  latency: 'Milliseconds from request to end of response.',
  time_to_first_token: 'Milliseconds to the first streamed token; NULL when unknown.',
  provider: 'Lower-case provider: openai, anthropic, google, … or custom.',
  model: 'The model as requested.',
  status: "HTTP status of the model's response (-3: a cancelled stream).",
  target_url: 'The URL the model request went to, when known.',
  prompt_tokens: 'Input tokens (cache reads and writes included).',
  completion_tokens: 'Output tokens.',
  total_tokens: 'Tokens in all.',
  cost: 'Cost in USD: as logged, else from the price table (0 for unknown models).',
  cached: 'The response came from a cache.',
  user_id: "The caller's end-user id; '' when none.",
  session_id: "The session's id; '' when none.",
  session_name: "The session's name; '' when none.",
  session_path: "The request's path in its session, e.g. /plan/step-1; '' when none.",
  properties:
    'Custom properties, name → value: as logged, with every property set after the fact (its latest value) applied.',
  prompt_id: 'The managed prompt the request used, when any.',
  prompt_version: 'The managed prompt version the request used, when any.',
  request_body: 'The model request as sent: JSON text.',
  response_body: 'The model response: JSON text, or the raw stream text.',
  trace_id: "The OpenTelemetry trace id of the model call (32 hex digits); '' when none.",
  span_id: "The model call's OpenTelemetry span id (16 hex digits); '' when none.",
  parent_span_id: "The parent span's id; '' for a root or when none.",
  ingested_at: 'When Tally stored this row.',
}

/** Every column but the organization, which is always the caller's own. */
const requestColumns = REQUEST_COLUMNS.filter((c) => c.name !== 'organization_id').map((c) => c.name)

/**
 * A request's properties as they are now: its own map with the latest value of every key set
 * after the fact (request_property_updates, one row per request and key under FINAL) put over it.
 * The updates are read for the organization only and grouped by request, so the LEFT JOIN adds no
 * row: one row per request, as before. Its cost is one hash table of the organization's updated
 * requests per query (updates are few beside requests); the outer WHERE still reaches the request
 * table's primary key (organization, time) through the subquery.
 */
const REQUEST_PROJECTION = `SELECT ${requestColumns
  .map((name) =>
    name === 'properties'
      ? `CAST(mapUpdate(r.properties, u.updates), '${PROPERTIES_TYPE}') AS properties`
      : `r.${name} AS ${name}`,
  )
  .join(', ')}`

/** The organization's requests in `table` of `db`, once each (FINAL). */
const ownRequests = (db: string, table: string, organization: string) =>
  `SELECT ${requestColumns.join(', ')} FROM ${db}.${table} FINAL WHERE ${organization}`

/** The organization's properties set after the fact in `table` of `db`: one map per request. */
const ownUpdates = (db: string, table: string, organization: string) =>
  'SELECT request_id AS updated_request_id, ' +
  `CAST(mapFromArrays(groupArray(key), groupArray(value)), '${PROPERTIES_TYPE}') AS updates ` +
  `FROM ${db}.${table} FINAL WHERE ${organization} GROUP BY request_id`

const requests: SqlView = {
  name: 'requests',
  description: "Your organization's requests, one row each (deduplicated: no FINAL needed).",
  columns: requestColumns.map((name) => ({
    name,
    description: REQUEST_COLUMN_DESCRIPTIONS[name] ?? '',
  })),
  select: (db) =>
    `${REQUEST_PROJECTION} FROM (${ownRequests(db, REQUEST_TABLE, ORGANIZATION)}) AS r ` +
    `LEFT JOIN (${ownUpdates(db, PROPERTY_UPDATE_TABLE, ORGANIZATION)}) AS u ON r.request_id = u.updated_request_id`,
  // GLOBAL: the organization's updates, read from every shard once, are sent to each shard's join.
  clusterSelect: (views) =>
    `${REQUEST_PROJECTION} FROM ${views}._requests AS r GLOBAL LEFT JOIN ${views}._updates AS u ON r.request_id = u.updated_request_id`,
}

const SCORE_VIEW_COLUMNS: readonly ViewColumn[] = [
  { name: 'id', description: "The score's id." },
  { name: 'target_kind', description: "What it grades: 'request' or 'session'." },
  { name: 'request_id', description: 'The request it grades; NULL for a score of a session.' },
  {
    name: 'session_id',
    description:
      "The session it grades; for a score of a request, that request's session ('' when the request has none or is not stored).",
  },
  { name: 'name', description: "The score's name, e.g. helpfulness." },
  { name: 'source', description: "Who gave it: 'api', 'annotation' or 'eval'." },
  { name: 'data_type', description: "'numeric', 'boolean' or 'categorical'." },
  {
    name: 'value',
    description: 'The number: a numeric score, 1 or 0 for a boolean one, 0 for a categorical one.',
  },
  { name: 'string_value', description: "A categorical score's category; '' otherwise." },
  { name: 'comment', description: "The comment given with it; '' when none." },
  { name: 'created_at', description: 'When it was given (UTC, milliseconds).' },
]

/**
 * One row per live score of the organization: FINAL keeps a score's latest version and drops the
 * deleted ones (`is_deleted = 0` says so again). A request's session is looked up among the
 * organization's own requests only, and only for the requests its scores grade (the IN keeps the
 * hash table to those); a score of another organization's request id finds no session.
 */
const SCORE_PROJECTION =
  'SELECT s.id AS id, s.target_kind AS target_kind, ' +
  "if(s.target_kind = 'request', s.request_id, NULL) AS request_id, " +
  "if(s.target_kind = 'request', r.request_session_id, s.session_id) AS session_id, " +
  's.name AS name, s.source AS source, s.data_type AS data_type, s.value AS value, ' +
  's.string_value AS string_value, s.comment AS comment, s.created_at AS created_at'

/** The organization's live scores in `table` of `db`, each once (FINAL, the deleted left out). */
const ownScores = (db: string, table: string, organization: string) =>
  'SELECT id, target_kind, request_id, session_id, name, source, data_type, value, string_value, ' +
  `comment, created_at FROM ${db}.${table} FINAL WHERE ${organization} AND is_deleted = 0`

const scores: SqlView = {
  name: 'scores',
  description:
    "Your organization's live scores (deleted ones left out, each score once), of requests and sessions.",
  columns: SCORE_VIEW_COLUMNS,
  select: (db) =>
    `${SCORE_PROJECTION} FROM (${ownScores(db, SCORE_TABLE, ORGANIZATION)}) AS s ` +
    'LEFT JOIN (SELECT request_id AS scored_request_id, argMax(session_id, ingested_at) AS request_session_id ' +
    `FROM ${db}.${REQUEST_TABLE} WHERE ${ORGANIZATION} AND request_id IN ` +
    `(SELECT request_id FROM ${db}.${SCORE_TABLE} WHERE ${ORGANIZATION} AND target_kind = 'request') ` +
    'GROUP BY request_id) AS r ON s.request_id = r.scored_request_id',
  // The requests' sessions come from every shard: GLOBAL IN sends the scored ids to each once,
  // GLOBAL JOIN the sessions found to the shards holding the scores.
  clusterSelect: (views) =>
    `${SCORE_PROJECTION} FROM ${views}._scores AS s ` +
    'GLOBAL LEFT JOIN (SELECT request_id AS scored_request_id, argMax(session_id, ingested_at) AS request_session_id ' +
    `FROM ${views}._requests WHERE request_id GLOBAL IN ` +
    `(SELECT request_id FROM ${views}._scores WHERE target_kind = 'request') ` +
    'GROUP BY request_id) AS r ON s.request_id = r.scored_request_id',
}

const SESSION_COLUMNS: readonly (ViewColumn & { expression: string })[] = [
  { name: 'session_id', expression: 'session_id', description: "The session's id." },
  {
    name: 'session_name',
    expression: 'argMax(session_name, request_created_at)',
    description: 'The name its latest request gave it.',
  },
  {
    name: 'first_request_at',
    expression: 'min(request_created_at)',
    description: 'When its first request was sent.',
  },
  {
    name: 'last_request_at',
    expression: 'max(request_created_at)',
    description: 'When its last request was sent.',
  },
  { name: 'requests', expression: 'count()', description: 'Requests in it.' },
  { name: 'prompt_tokens', expression: 'sum(prompt_tokens)', description: 'Input tokens in all.' },
  { name: 'completion_tokens', expression: 'sum(completion_tokens)', description: 'Output tokens in all.' },
  { name: 'total_tokens', expression: 'sum(total_tokens)', description: 'Tokens in all.' },
  { name: 'cost', expression: 'sum(cost)', description: 'Cost in USD in all.' },
  {
    name: 'errors',
    expression: 'countIf(status < 200 OR status >= 300)',
    description: 'Requests whose status was not 2xx.',
  },
  { name: 'models', expression: 'groupUniqArray(model)', description: 'The models it used.' },
  {
    name: 'user_ids',
    expression: "groupUniqArrayIf(user_id, user_id != '')",
    description: 'The end users it served.',
  },
]

const sessions: SqlView = {
  name: 'sessions',
  description: "Your organization's sessions (requests with a session id), one row each, with their totals.",
  columns: SESSION_COLUMNS,
  select: (db) => ownSessions(db, REQUEST_TABLE, ORGANIZATION),
  // A session's requests are on one shard (the sharding key), so each shard's sessions are whole.
  clusterSelect: (views) => `SELECT ${SESSION_COLUMNS.map((c) => c.name).join(', ')} FROM ${views}._sessions`,
}

/** The organization's sessions from the requests in `table` of `db`, with their totals. */
function ownSessions(db: string, table: string, organization: string): string {
  return (
    `SELECT ${SESSION_COLUMNS.map((c) => `${c.expression} AS ${c.name}`).join(', ')} ` +
    `FROM ${db}.${table} FINAL WHERE ${organization} AND session_id != '' GROUP BY session_id`
  )
}

/**
 * On a cluster, what each node holds of the organization's rows: a view per part over the node's
 * own table (\`<part>_local\`, SQL SECURITY DEFINER, its organization from the query's id), and a
 * Distributed table (\`<part>\`) over those views on every node. A definer view over a Distributed
 * table would not do: each shard checks the grants of the user who started the query (the
 * restricted user), not the view's definer (ClickHouse issues 72133, 88009), and that user may
 * read only the views' database. Here the shards are asked for views in it, which read their
 * node's tables with their definer's rights.
 */
const CLUSTER_PARTS: readonly { name: string; select(db: string): string }[] = [
  { name: '_requests', select: (db) => ownRequests(db, localTable(REQUEST_TABLE), ORGANIZATION_OF_QUERY) },
  // Updates are sharded by request: a request's updates are all on one node.
  {
    name: '_updates',
    select: (db) => ownUpdates(db, localTable(PROPERTY_UPDATE_TABLE), ORGANIZATION_OF_QUERY),
  },
  { name: '_scores', select: (db) => ownScores(db, localTable(SCORE_TABLE), ORGANIZATION_OF_QUERY) },
  { name: '_sessions', select: (db) => ownSessions(db, localTable(REQUEST_TABLE), ORGANIZATION_OF_QUERY) },
]

export const SQL_VIEWS: readonly SqlView[] = [requests, sessions, scores]

/**
 * Creates (or replaces, so a new column shows) the views. Run by Tally's own user at every start,
 * after the migrations: the definer must be the user that owns the tables.
 */
export async function ensureSqlViews(
  client: ClickHouseClient,
  database: string,
  layout: ClickHouseLayout = SINGLE_NODE,
  nodes: readonly ClickHouseClient[] = [client],
): Promise<void> {
  // ON CLUSTER reaches every node from one; per-node DDL is sent to each.
  for (const node of onCluster(layout) ? [client] : nodes)
    for (const query of sqlViewStatements(database, layout))
      await node.command({
        query,
        // The definition calls getClientHTTPHeader, which ClickHouse checks when it creates the view.
        clickhouse_settings: { allow_get_client_http_header: 1 },
      })
}

/** The views' database and views, ON CLUSTER when the layout's DDL is. */
export function sqlViewStatements(database: string, layout: ClickHouseLayout = SINGLE_NODE): string[] {
  const views = sqlViewsDatabase(database)
  const on = onCluster(layout)
  const definerView = (name: string, select: string) =>
    `CREATE OR REPLACE VIEW ${views}.${name}${on} DEFINER = CURRENT_USER SQL SECURITY DEFINER AS ${select}`
  if (layout.kind !== 'cluster')
    return [
      `CREATE DATABASE IF NOT EXISTS ${views}${on}`,
      ...SQL_VIEWS.map((view) => definerView(view.name, view.select(database))),
    ]
  const cluster = checkIdentifier(layout.cluster, 'cluster name')
  return [
    `CREATE DATABASE IF NOT EXISTS ${views}${on}`,
    ...CLUSTER_PARTS.flatMap((part) => [
      definerView(`${part.name}_local`, part.select(database)),
      `CREATE OR REPLACE TABLE ${views}.${part.name}${on} AS ${views}.${part.name}_local ` +
        `ENGINE = Distributed(${cluster}, ${views}, ${part.name}_local)`,
    ]),
    ...SQL_VIEWS.map((view) => definerView(view.name, view.clusterSelect(views))),
  ]
}
