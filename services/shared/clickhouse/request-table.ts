import { z } from 'zod'
import { clickHouseTime, fromClickHouseTime } from '../timestamp.ts'

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

const TIME = "DateTime64(3, 'UTC')"
/** The type of `properties`: what a map of properties is cast back to when updates are put over it. */
export const PROPERTIES_TYPE = 'Map(LowCardinality(String), String)'
const MAP = PROPERTIES_TYPE
const int = z.number().int().min(0)

/**
 * Each ClickHouse type the table uses: the kind of value it holds (how it reads back and what the
 * API record makes of it), the rule of the event field written into it, and how filters see it.
 */
const TYPES = {
  UUID: { kind: 'uuid', event: z.uuid(), filter: 'text' },
  [TIME]: { kind: 'time', event: z.date(), filter: 'timestamp' },
  UInt32: { kind: 'int', event: int, filter: 'number' },
  'Nullable(UInt32)': { kind: 'nullable-int', event: int.nullable(), filter: 'number' },
  Int32: { kind: 'int', event: z.number().int(), filter: 'number' },
  Float64: { kind: 'float', event: z.number(), filter: 'number' },
  Bool: { kind: 'bool', event: z.boolean(), filter: 'boolean' },
  String: { kind: 'text', event: z.string(), filter: 'text' },
  'LowCardinality(String)': { kind: 'text', event: z.string(), filter: 'text' },
  [MAP]: { kind: 'map', event: z.record(z.string(), z.string()), filter: undefined },
} as const

type ChType = keyof typeof TYPES

/** How a value reads back from ClickHouse (JSON output) and what the API record makes of it. */
export type ValueKind = (typeof TYPES)[ChType]['kind'] | 'body'

/** A filter's view of a column: the types the filter language knows (docs/sessions.md). */
export type FilterType = NonNullable<(typeof TYPES)[ChType]['filter']>

export interface RequestColumn {
  /** The ClickHouse column. */
  readonly name: string
  /** Its type in the DDL, as system.columns reports it. */
  readonly type: ChType
  readonly kind: ValueKind
  /** The event field it is written from, and that field's rule; absent: ClickHouse fills it. */
  readonly event?: { readonly field: string; readonly schema: z.ZodType }
  /** The field of the API's request record (the event field's name); absent: not shown. */
  readonly record?: string
  /** Names a filter leaf may use for it, and how it compares. */
  readonly filter?: { readonly type: FilterType; readonly names: readonly string[] }
  /** The name `sort` takes for it. */
  readonly sort?: string
}

interface Options {
  /** The event field's rule, where it is narrower than the type's. */
  event?: z.ZodType
  /** Names a filter may use: true for the column's own name. */
  filter?: true | readonly string[]
  sort?: string
  /** A model request or response: JSON text, read only when asked for. */
  body?: true
  /** Written but not shown in the request record. */
  hidden?: true
}

/** One written column; `field` is the event field and the request record's name for it. */
function column<
  const N extends string,
  const T extends ChType,
  const F extends string,
  const O extends Options = Record<never, never>,
>(name: N, type: T, field: F, options?: O) {
  const { event, filter, sort, body, hidden } = (options ?? {}) as Options
  const t = TYPES[type]
  return {
    name,
    type,
    kind: (body ? 'body' : t.kind) as O extends { body: true } ? 'body' : (typeof TYPES)[T]['kind'],
    event: {
      field,
      schema: (event ?? t.event) as O extends { event: infer S extends z.ZodType }
        ? S
        : (typeof TYPES)[T]['event'],
    },
    ...((hidden ? {} : { record: field }) as O extends { hidden: true }
      ? Record<never, never>
      : { record: F }),
    ...((filter
      ? { filter: { type: t.filter, names: filter === true ? [name] : filter } }
      : {}) as O extends {
      filter: unknown
    }
      ? { filter: { type: FilterType; names: readonly string[] } }
      : Record<never, never>),
    ...((sort ? { sort } : {}) as O extends { sort: infer S extends string }
      ? { sort: S }
      : Record<never, never>),
  }
}

export const REQUEST_COLUMNS = [
  column('organization_id', 'UUID', 'organization_id', { hidden: true }),
  column('request_id', 'UUID', 'request_id', { filter: true }),
  column('request_created_at', TIME, 'created_at', {
    filter: ['created_at', 'request_created_at'],
    sort: 'created_at',
  }),
  column('response_created_at', TIME, 'completed_at', { filter: true, sort: 'completed_at' }),
  column('latency', 'UInt32', 'latency_ms', { filter: true, sort: 'latency' }),
  column('time_to_first_token', 'Nullable(UInt32)', 'time_to_first_token_ms', {
    filter: true,
    sort: 'time_to_first_token',
  }),
  column('provider', 'LowCardinality(String)', 'provider', { filter: true, sort: 'provider' }),
  column('model', 'LowCardinality(String)', 'model', { filter: true, sort: 'model' }),
  column('status', 'Int32', 'status', { filter: true, sort: 'status' }),
  column('target_url', 'String', 'target_url', { filter: true }),
  column('prompt_tokens', 'UInt32', 'prompt_tokens', { filter: true, sort: 'prompt_tokens' }),
  column('completion_tokens', 'UInt32', 'completion_tokens', { filter: true, sort: 'completion_tokens' }),
  column('total_tokens', 'UInt32', 'total_tokens', { filter: true, sort: 'total_tokens' }),
  column('cost', 'Float64', 'cost_usd', { event: z.number().min(0), filter: true, sort: 'cost' }),
  column('cached', 'Bool', 'cached', { filter: true }),
  column('user_id', 'String', 'user_id', { filter: true, sort: 'user_id' }),
  column('session_id', 'String', 'session_id', { filter: true }),
  column('session_name', 'String', 'session_name', { filter: true }),
  column('session_path', 'String', 'session_path', { filter: true }),
  // Filtered by property name (`properties[name]`), not as one field: see the filter compiler.
  column('properties', MAP, 'properties'),
  column('prompt_id', 'String', 'prompt_id', { filter: true }),
  column('prompt_version', 'String', 'prompt_version_id', {
    filter: ['prompt_version', 'prompt_version_id'],
  }),
  column('request_body', 'String', 'request_body', { body: true, filter: true }),
  column('response_body', 'String', 'response_body', { body: true, filter: true }),
  // OpenTelemetry ids (0003): the request's span in its trace, for session trees.
  column('trace_id', 'String', 'trace_id', { filter: true }),
  column('span_id', 'String', 'span_id', { filter: true }),
  column('parent_span_id', 'String', 'parent_span_id', { filter: true }),
  // The version ReplacingMergeTree keeps: filled by ClickHouse at insert.
  { name: 'ingested_at', type: TIME, kind: 'time' },
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

/**
 * The insert of request events as an Avro container of their event-topic records
 * (schemas/events/request-event.avsc): ClickHouse reads each record by the event's field names, as
 * the column types, and writes them to {@link INSERT_COLUMNS}. Followed by the container itself.
 * A Float64 is written `+ 0`, which makes -0 (a JSON `-0` passes `min(0)`) 0, as JSON rows did.
 */
export const AVRO_INSERT = (() => {
  const written = REQUEST_COLUMNS.flatMap((c) => ('event' in c ? [c] : []))
  const structure = written.map((c) => `${c.event.field} ${c.type}`).join(', ')
  const values = written.map((c) => (c.type === 'Float64' ? `${c.event.field} + 0` : c.event.field))
  return (
    `INSERT INTO ${REQUEST_TABLE} (${INSERT_COLUMNS.join(', ')}) ` +
    `SELECT ${values.join(', ')} ` +
    `FROM input('${structure.replaceAll("'", "\\'")}') FORMAT Avro`
  )
})()

const WRITTEN = REQUEST_COLUMNS.flatMap((c) =>
  'event' in c ? [{ name: c.name, field: c.event.field as keyof Event, time: c.kind === 'time' }] : [],
)

/**
 * One event's values in {@link INSERT_COLUMNS} order, for JSONCompactEachRow: no column names
 * repeated in every row, so less to serialise and for ClickHouse to parse.
 */
export function toCompactRow(event: Event): unknown[] {
  // A plain loop: this runs for every event the ingest writes.
  const row = new Array<unknown>(WRITTEN.length)
  for (let i = 0; i < WRITTEN.length; i++) {
    const { field, time } = WRITTEN[i] as (typeof WRITTEN)[number]
    row[i] = time ? clickHouseTime(event[field] as Date) : event[field]
  }
  return row
}

/** One event as a row object keyed by column (JSONEachRow), for tests and tools. */
export function toRow(event: Event): Record<string, unknown> {
  const values = toCompactRow(event)
  return Object.fromEntries(WRITTEN.map(({ name }, i) => [name, values[i]]))
}

/** How each kind of value reads back from JSONEachRow (64-bit integers unquoted, times ISO). */
export const READ = {
  uuid: z.string(),
  text: z.string(),
  int: z.number().int(),
  'nullable-int': z.number().int().nullable(),
  float: z.number(),
  bool: z.boolean(),
  time: z.string().transform(fromClickHouseTime),
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
export const FILTER_FIELDS: ReadonlyMap<
  string,
  { column: string; type: FilterType; uuid: boolean; event: keyof Event }
> = new Map(
  REQUEST_COLUMNS.flatMap((c) =>
    'filter' in c
      ? c.filter.names.map(
          (n) =>
            [
              n,
              { column: c.name, type: c.filter.type, uuid: c.kind === 'uuid', event: c.event.field },
            ] as const,
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

/**
 * The property names Helicone gives a request's session. Rows that came through Helicone's
 * paths carry them as properties (as Helicone stores them); rows from Tally's own intakes keep
 * their properties as sent. A filter — of a query or of a webhook — that names one of these
 * properties reads the session column instead, so it matches a request however it arrived.
 */
export const SESSION_PROPERTIES = {
  'Helicone-Session-Id': 'session_id',
  'Helicone-Session-Name': 'session_name',
  'Helicone-Session-Path': 'session_path',
} as const satisfies Record<string, keyof Event>

export type SessionProperty = keyof typeof SESSION_PROPERTIES

export const isSessionProperty = (name: string): name is SessionProperty =>
  Object.hasOwn(SESSION_PROPERTIES, name)
