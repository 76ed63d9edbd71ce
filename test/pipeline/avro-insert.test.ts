import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestHandler } from '../../services/ingest/handler.ts'
import {
  INSERT_COLUMNS,
  REQUEST_TABLE,
  toCompactRow,
} from '../../services/shared/clickhouse/request-table.ts'
import {
  createDeletedOrganizations,
  type DeletedOrganizations,
} from '../../services/shared/deleted-organizations.ts'
import { loadRequestCodec, type RecordCodec } from '../../services/shared/events/codec.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'

const log = pino({ level: 'silent' })
const at = (iso: string) => ({ created_at: new Date(iso), completed_at: new Date(iso) })

// The values a request event may carry at its edges: each is written once as the ingest writes
// it (the event's Avro record) and once as a JSON row of the same values, and the two rows must
// be the same in every column.
const EDGES: Record<string, Partial<RequestEvent>> = {
  plain: {},
  nul: { user_id: 'a\u0000b', request_body: '{"x":"\\u0000"}', response_body: '\u0000' },
  unicode: { session_name: 'ümlaut 😀 \u2028 \u{10ffff}', properties: { 'k😀': 'v\u0000', '': '' } },
  largest: {
    latency_ms: 2 ** 31 - 1,
    prompt_tokens: 2 ** 31 - 1,
    status: 2 ** 31 - 1,
    cost_usd: Number.MAX_VALUE,
  },
  smallest: { status: -(2 ** 31), cost_usd: Number.MIN_VALUE, time_to_first_token_ms: 0, latency_ms: 0 },
  // JSON `-0` passes the cost's min(0); the JSON rows wrote it as 0.
  'negative zero': { cost_usd: -0 },
  'no first token': { time_to_first_token_ms: null },
  'empty properties': { properties: {}, target_url: '', trace_id: '', session_id: '' },
  'many properties': {
    properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, 'v'.repeat(i)])),
  },
  'large body': { request_body: 'x'.repeat(1 << 20) },
  'first time': at('1900-01-01T00:00:00.000Z'),
  'last time': at('2299-12-31T23:59:59.999Z'),
  epoch: { created_at: new Date(0), completed_at: new Date(-1) },
  'ids in capitals': { trace_id: 'ABCDEF0123456789ABCDEF0123456789', span_id: '0123456789ABCDEF' },
}

describe('request events written as their Avro records, on the real ClickHouse', () => {
  let tally: TestTally
  let deletions: DeletedOrganizations
  let codec: RecordCodec<RequestEvent>
  beforeAll(async () => {
    tally = await startTestTally()
    deletions = await createDeletedOrganizations(tally.sql, log)
    codec = await loadRequestCodec()
  })
  afterAll(async () => {
    await deletions?.close()
    await tally?.close()
  })

  const rowsOf = async (org: string) => {
    const rs = await tally.clickhouse.query({
      query: `SELECT * EXCEPT (organization_id, ingested_at) FROM ${REQUEST_TABLE} FINAL
              WHERE organization_id = {org:UUID} ORDER BY user_id, request_id`,
      query_params: { org },
      format: 'JSONEachRow',
    })
    return rs.json()
  }

  it('store every value exactly as a JSON row of the same event does', async () => {
    const viaAvro = crypto.randomUUID()
    const viaJson = crypto.randomUUID()
    const events = Object.entries(EDGES).map(([name, edge]) => sampleEvent({ user_id: name, ...edge }))
    const handler = createIngestHandler(tally.clickhouse, log, deletions, codec)
    // Decoded as the consumer does: the records travel as the bytes they were decoded from.
    await handler.handle(events.map((e) => codec.decode(codec.encode({ ...e, organization_id: viaAvro }))))
    await tally.clickhouse.insert({
      table: REQUEST_TABLE,
      columns: [...INSERT_COLUMNS],
      values: events.map((e) => toCompactRow({ ...e, organization_id: viaJson })),
      format: 'JSONCompactEachRow',
    })
    const avro = await rowsOf(viaAvro)
    expect(avro).toHaveLength(events.length)
    expect(avro).toEqual(await rowsOf(viaJson))
  })

  it('writes events never decoded (no bytes to pass on) the same way', async () => {
    const org = crypto.randomUUID()
    const event = sampleEvent({ organization_id: org, properties: { a: 'b' } })
    await createIngestHandler(tally.clickhouse, log, deletions, codec).handle([event])
    expect(await rowsOf(org)).toEqual([
      expect.objectContaining({ request_id: event.request_id, properties: { a: 'b' }, user_id: 'user-1' }),
    ])
  })

  it('refuses a time past DateTime64 as ClickHouse refuses it, and writes nothing of that batch it could not', async () => {
    const org = crypto.randomUUID()
    const handler = createIngestHandler(tally.clickhouse, log, deletions, codec)
    const far = codec.decode(codec.encode(sampleEvent({ organization_id: org, created_at: new Date(8e15) })))
    const err = await handler.handle([far]).catch((e) => e)
    expect(handler.permanent?.(err)).toMatch(/^clickhouse CANNOT_PARSE_DATETIME \(code 41\)/)
    expect(await rowsOf(org)).toEqual([])
  })
})
