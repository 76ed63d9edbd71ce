import { z } from 'zod'
import {
  READ,
  REQUEST_COLUMNS,
  type RequestRow,
  type ValueKind,
} from '../../shared/clickhouse/request-table.ts'
import { parseEventBody } from '../../shared/events/request-event.ts'
import { isoTimestamp } from '../http/envelope.ts'

/**
 * How each kind of stored value is shown in the API's request record: as it reads back, but for
 * ids (UUIDs), times (ISO 8601 on the wire) and bodies (parsed JSON, only with includeBody).
 */
const SHOWN = {
  ...READ,
  uuid: z.uuid(),
  time: isoTimestamp,
  body: z.unknown().optional(),
} as const satisfies Record<ValueKind, z.ZodType>

const BODY_DESCRIPTIONS: Record<string, string> = {
  request_body: 'The model request (JSON when it was JSON); with includeBody',
  response_body: 'The model response (JSON, or its text); with includeBody',
}

type Shown = Extract<(typeof REQUEST_COLUMNS)[number], { record: string }>

const SHOWN_COLUMNS = REQUEST_COLUMNS.filter((c): c is Shown => 'record' in c)

/** A request as the query and GET answer it: every column of request-table.ts with a record name. */
export const requestRecord = z
  .object(
    Object.fromEntries(
      SHOWN_COLUMNS.map((c) => {
        const shown = SHOWN[c.kind]
        return [c.record, c.kind === 'body' ? shown.describe(BODY_DESCRIPTIONS[c.record] ?? '') : shown]
      }),
    ) as { [C in Shown as C['record']]: (typeof SHOWN)[C['kind']] },
  )
  .meta({ id: 'RequestRecord' })

export type RequestRecord = z.infer<typeof requestRecord>

/** The record's field names, in column order: what `fields` may name. */
export const RECORD_FIELDS = SHOWN_COLUMNS.map((c) => c.record) as [Shown['record'], ...Shown['record'][]]
export type RecordField = (typeof RECORD_FIELDS)[number]

/** The columns a read selects for the given record fields; bodies only when `includeBody`. */
export function columnsFor(fields: readonly RecordField[] | undefined, includeBody: boolean): string[] {
  return SHOWN_COLUMNS.filter((c) =>
    fields ? fields.includes(c.record) : includeBody || c.kind !== 'body',
  ).map((c) => c.name)
}

/**
 * A row read back (already checked) under the record's names; bodies parsed from their JSON text.
 * Only the columns the row holds (and `fields` names, when given) are shown.
 */
export function toRecord(row: Partial<RequestRow>, fields?: readonly RecordField[]): RequestRecord {
  const record: Record<string, unknown> = {}
  for (const c of SHOWN_COLUMNS) {
    const value = row[c.name as keyof RequestRow]
    if (value === undefined || (fields && !fields.includes(c.record))) continue
    record[c.record] = c.kind === 'body' ? parseEventBody(value as string) : value
  }
  return record as RequestRecord
}
