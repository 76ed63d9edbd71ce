import { z } from 'zod'

/**
 * request_response_rmt, declared once: every column with the event field it is written from, its
 * ClickHouse type, how it reads back, the name the API's request record gives it, and whether
 * filters and sorts may name it. The insert's column list and row builder, the event schema, the
 * checked read schema, the request record, the filter field table and the sort columns are all
 * derived from this list. The DDL (schemas/clickhouse/) and the Avro wire schema
 * (schemas/events/request-event.avsc) stay files: test/foundation/request-table.test.ts fails when
 * either disagrees with it.
 *
 * Where names differ, the event and the API record say `latency_ms`, `cost_usd`,
 * `prompt_version_id`, `created_at`, `completed_at`, `time_to_first_token_ms`; the table says
 * `latency`, `cost`, `prompt_version`, `request_created_at`, `response_created_at`,
 * `time_to_first_token` (Helicone's column names, which data teams query).
 */

export const REQUEST_TABLE = 'request_response_rmt'

/** How a value reads back from ClickHouse (JSON output) and what the API record makes of it. */
export type ValueKind = 'uuid' | 'text' | 'int' | 'nullable-int' | 'float' | 'bool' | 'time' | 'map' | 'body'

/** A filter's view of a column: the types the filter language knows (docs/sessions.md). */
export type FilterType = 'text' | 'number' | 'timestamp' | 'boolean'

export interface RequestColumn {
  /** The ClickHouse column. */
  readonly name: string
  /** Its type in the DDL, as system.columns reports it. */
  readonly type: string
  readonly kind: ValueKind
  /** The event field it is written from, and that field's rule; absent: ClickHouse fills it. */
  readonly event?: { readonly field: string; readonly schema: z.ZodType }
  /** The field of the API's request record; absent: not shown (the organization is the caller's). */
  readonly record?: string
  /** Names a filter leaf may use for it (the first is the column's own, or its alias). */
  readonly filter?: { readonly type: FilterType; readonly names: readonly string[] }
  /** The name `sort` takes for it. */
  readonly sort?: string
}

const int = z.number().int().min(0)

export const REQUEST_COLUMNS = [
  {
    name: 'organization_id',
    type: 'UUID',
    kind: 'uuid',
    event: { field: 'organization_id', schema: z.uuid() },
  },
  {
    name: 'request_id',
    type: 'UUID',
    kind: 'uuid',
    event: { field: 'request_id', schema: z.uuid() },
    record: 'request_id',
    filter: { type: 'text', names: ['request_id'] },
  },
  {
    name: 'request_created_at',
    type: "DateTime64(3, 'UTC')",
    kind: 'time',
    event: { field: 'created_at', schema: z.date() },
    record: 'created_at',
    filter: { type: 'timestamp', names: ['created_at', 'request_created_at'] },
    sort: 'created_at',
  },
  {
    name: 'response_created_at',
    type: "DateTime64(3, 'UTC')",
    kind: 'time',
    event: { field: 'completed_at', schema: z.date() },
    record: 'completed_at',
    filter: { type: 'timestamp', names: ['response_created_at'] },
    sort: 'completed_at',
  },
  {
    name: 'latency',
    type: 'UInt32',
    kind: 'int',
    event: { field: 'latency_ms', schema: int },
    record: 'latency_ms',
    filter: { type: 'number', names: ['latency'] },
    sort: 'latency',
  },
  {
    name: 'time_to_first_token',
    type: 'Nullable(UInt32)',
    kind: 'nullable-int',
    event: { field: 'time_to_first_token_ms', schema: int.nullable() },
    record: 'time_to_first_token_ms',
    filter: { type: 'number', names: ['time_to_first_token'] },
    sort: 'time_to_first_token',
  },
  {
    name: 'provider',
    type: 'LowCardinality(String)',
    kind: 'text',
    event: { field: 'provider', schema: z.string() },
    record: 'provider',
    filter: { type: 'text', names: ['provider'] },
    sort: 'provider',
  },
  {
    name: 'model',
    type: 'LowCardinality(String)',
    kind: 'text',
    event: { field: 'model', schema: z.string() },
    record: 'model',
    filter: { type: 'text', names: ['model'] },
    sort: 'model',
  },
  {
    name: 'status',
    type: 'Int32',
    kind: 'int',
    event: { field: 'status', schema: z.number().int() },
    record: 'status',
    filter: { type: 'number', names: ['status'] },
    sort: 'status',
  },
  {
    name: 'target_url',
    type: 'String',
    kind: 'text',
    event: { field: 'target_url', schema: z.string() },
    record: 'target_url',
    filter: { type: 'text', names: ['target_url'] },
  },
  {
    name: 'prompt_tokens',
    type: 'UInt32',
    kind: 'int',
    event: { field: 'prompt_tokens', schema: int },
    record: 'prompt_tokens',
    filter: { type: 'number', names: ['prompt_tokens'] },
    sort: 'prompt_tokens',
  },
  {
    name: 'completion_tokens',
    type: 'UInt32',
    kind: 'int',
    event: { field: 'completion_tokens', schema: int },
    record: 'completion_tokens',
    filter: { type: 'number', names: ['completion_tokens'] },
    sort: 'completion_tokens',
  },
  {
    name: 'total_tokens',
    type: 'UInt32',
    kind: 'int',
    event: { field: 'total_tokens', schema: int },
    record: 'total_tokens',
    filter: { type: 'number', names: ['total_tokens'] },
    sort: 'total_tokens',
  },
  {
    name: 'cost',
    type: 'Float64',
    kind: 'float',
    event: { field: 'cost_usd', schema: z.number().min(0) },
    record: 'cost_usd',
    filter: { type: 'number', names: ['cost'] },
    sort: 'cost',
  },
  {
    name: 'cached',
    type: 'Bool',
    kind: 'bool',
    event: { field: 'cached', schema: z.boolean() },
    record: 'cached',
    filter: { type: 'boolean', names: ['cached'] },
  },
  {
    name: 'user_id',
    type: 'String',
    kind: 'text',
    event: { field: 'user_id', schema: z.string() },
    record: 'user_id',
    filter: { type: 'text', names: ['user_id'] },
    sort: 'user_id',
  },
  {
    name: 'session_id',
    type: 'String',
    kind: 'text',
    event: { field: 'session_id', schema: z.string() },
    record: 'session_id',
    filter: { type: 'text', names: ['session_id'] },
  },
  {
    name: 'session_name',
    type: 'String',
    kind: 'text',
    event: { field: 'session_name', schema: z.string() },
    record: 'session_name',
    filter: { type: 'text', names: ['session_name'] },
  },
  {
    name: 'session_path',
    type: 'String',
    kind: 'text',
    event: { field: 'session_path', schema: z.string() },
    record: 'session_path',
    filter: { type: 'text', names: ['session_path'] },
  },
  {
    // Filtered by property name (`properties[name]`), not as one field: see the filter compiler.
    name: 'properties',
    type: 'Map(LowCardinality(String), String)',
    kind: 'map',
    event: { field: 'properties', schema: z.record(z.string(), z.string()) },
    record: 'properties',
  },
  {
    name: 'prompt_id',
    type: 'String',
    kind: 'text',
    event: { field: 'prompt_id', schema: z.string() },
    record: 'prompt_id',
    filter: { type: 'text', names: ['prompt_id'] },
  },
  {
    name: 'prompt_version',
    type: 'String',
    kind: 'text',
    event: { field: 'prompt_version_id', schema: z.string() },
    record: 'prompt_version_id',
    filter: { type: 'text', names: ['prompt_version', 'prompt_version_id'] },
  },
  {
    name: 'request_body',
    type: 'String',
    kind: 'body',
    event: { field: 'request_body', schema: z.string() },
    record: 'request_body',
    filter: { type: 'text', names: ['request_body'] },
  },
  {
    name: 'response_body',
    type: 'String',
    kind: 'body',
    event: { field: 'response_body', schema: z.string() },
    record: 'response_body',
    filter: { type: 'text', names: ['response_body'] },
  },
  { name: 'ingested_at', type: "DateTime64(3, 'UTC')", kind: 'time' },
] as const satisfies readonly RequestColumn[]

type Columns = (typeof REQUEST_COLUMNS)[number]
type Written = Extract<Columns, { event: unknown }>

/** The shape of a request event: one field per written column. */
export const requestEventShape = Object.fromEntries(
  REQUEST_COLUMNS.flatMap((c) => ('event' in c ? [[c.event.field, c.event.schema]] : [])),
) as { [C in Written as C['event']['field']]: C['event']['schema'] }

type Event = { [C in Written as C['event']['field']]: z.output<C['event']['schema']> }

/** The columns every insert names, in the order of {@link toCompactRow}'s values. */
export const INSERT_COLUMNS = REQUEST_COLUMNS.flatMap((c) => ('event' in c ? [c.name] : [])) as [
  string,
  ...string[],
]

/** ClickHouse DateTime64(3, 'UTC') text form. */
export function chTime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '')
}

const WRITTEN = REQUEST_COLUMNS.flatMap((c) =>
  'event' in c ? [{ name: c.name, field: c.event.field as keyof Event, time: c.kind === 'time' }] : [],
)

/**
 * One event's values in {@link INSERT_COLUMNS} order, for JSONCompactEachRow: no column names
 * repeated in every row, so less to serialise and for ClickHouse to parse.
 */
export function toCompactRow(event: Event): unknown[] {
  return WRITTEN.map(({ field, time }) => (time ? chTime(event[field] as Date) : event[field]))
}

/** One event as a row object keyed by column (JSONEachRow), for tests and tools. */
export function toRow(event: Event): Record<string, unknown> {
  const values = toCompactRow(event)
  return Object.fromEntries(WRITTEN.map(({ name }, i) => [name, values[i]]))
}

// ClickHouse answers DateTime64 as ISO without zone in some setups: read it as UTC.
const utc = (text: string) =>
  new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text.replace(' ', 'T')}Z`)

/** How each kind of value reads back from JSONEachRow (64-bit integers unquoted, times ISO). */
const READ = {
  uuid: z.string(),
  text: z.string(),
  int: z.number().int(),
  'nullable-int': z.number().int().nullable(),
  float: z.number(),
  bool: z.boolean(),
  time: z.string().transform(utc),
  map: z.record(z.string(), z.string()),
  body: z.string(),
} as const satisfies Record<ValueKind, z.ZodType>

type Recorded = Extract<Columns, { record: string }>

/** A column shown in the API's request record, with the value it reads back as. */
type ReadShape = {
  [C in Recorded as C['name']]: C['kind'] extends 'body'
    ? z.ZodOptional<typeof READ.body>
    : (typeof READ)[C['kind']]
}

/**
 * Settings of every read that collapses redelivered copies with FINAL (same sorting key). A request
 * id is always in one month partition (the key holds its created_at), so FINAL need not merge
 * across partitions.
 */
export const READ_SETTINGS = { do_not_merge_across_partitions_select_final: 1 } as const

/** The columns a request read selects: all recorded ones, bodies only when asked for. */
export function readColumns(includeBody: boolean): string {
  return REQUEST_COLUMNS.filter((c) => 'record' in c && (includeBody || c.kind !== 'body'))
    .map((c) => c.name)
    .join(', ')
}

/** Rows read back are checked against the table's definition, not cast. */
export const requestRowSchema = z.object(
  Object.fromEntries(
    REQUEST_COLUMNS.flatMap((c) =>
      'record' in c ? [[c.name, c.kind === 'body' ? READ.body.optional() : READ[c.kind]]] : [],
    ),
  ) as ReadShape,
)

export type RequestRow = z.output<typeof requestRowSchema>

/** Filterable fields by the names a filter leaf uses, in column order. */
export const FILTER_FIELDS: ReadonlyMap<string, { column: string; type: FilterType; uuid: boolean }> =
  new Map(
    REQUEST_COLUMNS.flatMap((c) =>
      'filter' in c
        ? c.filter.names.map(
            (n) => [n, { column: c.name, type: c.filter.type, uuid: c.kind === 'uuid' }] as const,
          )
        : [],
    ),
  )

type Sorted = Extract<Columns, { sort: string }>
export type SortField = Sorted['sort']

/** Sortable fields by the name `sort` takes, and their columns. */
export const SORT_COLUMNS = Object.fromEntries(
  REQUEST_COLUMNS.flatMap((c) => ('sort' in c ? [[c.sort, c.name]] : [])),
) as Record<SortField, string>
