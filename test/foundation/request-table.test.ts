import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toRecord } from '../../services/api/requests/record.ts'
import type { ClickHouseHandle } from '../../services/shared/clickhouse/client.ts'
import {
  INSERT_COLUMNS,
  READ_SETTINGS,
  REQUEST_COLUMNS,
  REQUEST_TABLE,
  type RequestColumn,
  readColumns,
  requestRowSchema,
  toCompactRow,
  type ValueKind,
} from '../../services/shared/clickhouse/request-table.ts'
import { EVENTS_DIR } from '../../services/shared/events/codec.ts'
import { openMigratedClickHouse } from '../support/clickhouse.ts'
import { sampleEvent } from '../support/events.ts'

// The two files that stay files, the Avro wire schema and the DDL, must say what the table's
// definition says: a field added to one and not the others fails here.

interface AvroField {
  name: string
  type: unknown
}

const avroFields: AvroField[] = JSON.parse(readFileSync(`${EVENTS_DIR}request-event.avsc`, 'utf8')).fields
const columns: readonly RequestColumn[] = REQUEST_COLUMNS

/** The Avro type that carries each kind of value. */
const AVRO_TYPE: Record<ValueKind, unknown> = {
  uuid: 'string',
  text: 'string',
  body: 'string',
  int: 'int',
  'nullable-int': ['null', 'int'],
  float: 'double',
  bool: 'boolean',
  time: { type: 'long', logicalType: 'timestamp-millis' },
  map: { type: 'map', values: 'string' },
}

describe('the request table definition', () => {
  it('has one written column for every field of the Avro event schema, and no other', () => {
    const written = columns.flatMap((c) => (c.event ? [c.event.field] : []))
    expect([...written].sort()).toEqual(avroFields.map((f) => f.name).sort())
  })

  it('gives each column the Avro type of its event field', () => {
    for (const field of avroFields) {
      const column = columns.find((c) => c.event?.field === field.name) as RequestColumn
      expect({ field: field.name, type: field.type }).toEqual({
        field: field.name,
        type: AVRO_TYPE[column.kind],
      })
    }
  })

  it('inserts every written column, in the order of the row builder', () => {
    const event = sampleEvent()
    const row = toCompactRow(event)
    expect(row).toHaveLength(INSERT_COLUMNS.length)
    expect(row[INSERT_COLUMNS.indexOf('latency')]).toBe(event.latency_ms)
    expect(row[INSERT_COLUMNS.indexOf('request_created_at')]).toBe('2026-11-01 10:00:00.000')
    expect(INSERT_COLUMNS).not.toContain('ingested_at')
  })
})

describe('the request table in ClickHouse', () => {
  let ch: ClickHouseHandle
  beforeAll(async () => {
    ch = await openMigratedClickHouse()
  })
  afterAll(() => ch.close())

  it('has exactly the columns and types of the definition, in its order, after every migration', async () => {
    const rs = await ch.client.query({
      query: `SELECT name, type FROM system.columns
              WHERE database = currentDatabase() AND table = {table:String} ORDER BY position`,
      query_params: { table: REQUEST_TABLE },
      format: 'JSONEachRow',
    })
    expect(await rs.json()).toEqual(columns.map((c) => ({ name: c.name, type: c.type })))
  })

  it('reads a written event back, checked, as the request record under the record names', async () => {
    const event = sampleEvent({ time_to_first_token_ms: null, properties: { env: 'test', 'a.b': 'c' } })
    await ch.client.insert({
      table: REQUEST_TABLE,
      columns: [...INSERT_COLUMNS],
      values: [toCompactRow(event)],
      format: 'JSONCompactEachRow',
    })
    const rs = await ch.client.query({
      query: `SELECT ${readColumns(true)} FROM ${REQUEST_TABLE} FINAL
              WHERE organization_id = {org:UUID} AND request_id = {id:UUID}`,
      query_params: { org: event.organization_id, id: event.request_id },
      clickhouse_settings: READ_SETTINGS,
      format: 'JSONEachRow',
    })
    const [row] = requestRowSchema.array().parse(await rs.json())
    const { organization_id: _, request_body, response_body, ...rest } = event
    expect(toRecord(row as never)).toEqual({
      ...rest,
      request_body: JSON.parse(request_body),
      response_body: JSON.parse(response_body),
    })
  })

  it('refuses a row read back that breaks the definition instead of passing it on', () => {
    const bad = { request_id: 'x', request_created_at: '2026-11-01T10:00:00Z', latency: 'slow' }
    expect(() => requestRowSchema.parse(bad)).toThrow(/latency/)
  })
})
