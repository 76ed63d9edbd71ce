import { readFileSync } from 'node:fs'
import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { type AnnotationEvent, annotationEventSchema } from '../../services/shared/events/annotation-event.ts'
import {
  crc64Avro,
  createAvroCodec,
  DecodeError,
  EVENTS_DIR,
  loadEventCodec,
  loadRequestCodec,
} from '../../services/shared/events/codec.ts'
import { type RequestEvent, requestEventSchema } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'

const currentSchema = JSON.parse(readFileSync(`${EVENTS_DIR}request-event.avsc`, 'utf8'))

describe('CRC-64-AVRO', () => {
  it('matches the Avro specification test vectors', () => {
    expect(crc64Avro(Buffer.from('"null"'))).toBe(7195948357588979594n)
    expect(crc64Avro(Buffer.from('"int"'))).toBe(0x7275d51a3f395c8fn)
    expect(crc64Avro(Buffer.from('"string"'))).toBe(0x8f014872634503c7n)
  })
})

describe('request event codec', () => {
  it('round-trips an event in single-object encoding', async () => {
    const codec = await loadEventCodec()
    const event = sampleEvent()
    const bytes = codec.encode(event)
    expect([...bytes.subarray(0, 2)]).toEqual([0xc3, 0x01])
    expect(codec.decode(bytes)).toEqual(event)
  })

  it("gives a decoded event's body as the bytes it came in, and encodes any other", async () => {
    const codec = await loadRequestCodec()
    const bytes = codec.encode(sampleEvent())
    const decoded = codec.decode(bytes)
    // A view of the message's own bytes past the 10-byte header, not a copy (small buffers share
    // Node's pool, so the offset is compared too).
    const within = (part: Buffer, whole: Buffer) =>
      part.buffer === whole.buffer && part.byteOffset === whole.byteOffset + 10
    const body = codec.body(decoded)
    expect(within(body, bytes)).toBe(true)
    expect(body).toEqual(bytes.subarray(10))
    // The same values never decoded: encoded now, to the same bytes.
    expect(codec.body({ ...decoded })).toEqual(bytes.subarray(10))
    // Read from an older writer schema: encoded in the current one, not passed on.
    const v1 = createAvroCodec(
      JSON.parse(readFileSync(`${EVENTS_DIR}request-event.v1.avsc`, 'utf8')),
      [],
      (v) => v as RequestEvent,
    )
    const written = v1.encode(decoded)
    const old = codec.decode(written)
    expect(within(codec.body(old), written)).toBe(false)
    expect(codec.decode(Buffer.concat([bytes.subarray(0, 10), codec.body(old)]))).toEqual(old)
  })

  it('keeps the Avro schema and the in-memory schema to the same fields', () => {
    const avroFields = currentSchema.fields.map((f: { name: string }) => f.name).sort()
    expect(avroFields).toEqual(Object.keys(requestEventSchema.shape).sort())
  })

  it('reads an event written with v1 using a v2 that adds an optional field', () => {
    const v1 = currentSchema
    const v2 = { ...v1, fields: [...v1.fields, { name: 'region', type: ['null', 'string'], default: null }] }
    const writer = createAvroCodec(v1, [v1], (v) => v as RequestEvent)
    const reader = createAvroCodec(v2, [v1, v2], (v) => v as RequestEvent & { region: string | null })
    const event = sampleEvent()
    const read = reader.decode(writer.encode(event))
    expect(read.region).toBeNull()
    expect(read.request_id).toBe(event.request_id)
    expect(read.created_at).toEqual(event.created_at)
  })

  it('refuses what it cannot read, with a reason', async () => {
    const codec = await loadEventCodec()
    expect(() => codec.decode(Buffer.from('{"json":true}'))).toThrowError(DecodeError)
    const unknown = Buffer.concat([Buffer.from([0xc3, 0x01]), Buffer.alloc(8, 7), Buffer.from([1, 2, 3])])
    expect(() => codec.decode(unknown)).toThrowError(/unknown writer schema fingerprint/)
    const truncated = codec.encode(sampleEvent()).subarray(0, 30)
    expect(() => codec.decode(truncated)).toThrowError(/undecodable Avro body/)
    const type = avro.Type.forSchema(currentSchema)
    const good = codec.encode(sampleEvent())
    const invalid = Buffer.concat([
      good.subarray(0, 10),
      type.toBuffer({ ...type.fromBuffer(good.subarray(10)), request_id: 'not-a-uuid' }),
    ])
    expect(() => codec.decode(invalid)).toThrowError(/invalid event/)
  })
})

describe('annotation events on the same codec', () => {
  const annotation: AnnotationEvent = {
    organization_id: '3b1f6c2e-8d4a-4f1b-9c2e-7a5d3e1f0b9c',
    kind: 'score',
    score_id: '5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42',
    target_kind: 'request',
    request_id: '7b7e961d-254e-5401-8ee5-9452b893e55b',
    session_id: '',
    name: 'helpfulness',
    data_type: 'numeric',
    value: 0.75,
    string_value: '',
    source: 'eval',
    comment: 'grader v2',
    created_at: new Date('2026-11-27T09:00:00.123Z'),
    version: 1795683600123000,
    deleted: false,
  }

  it('round-trips a score beside a request: the fingerprint says which it is', async () => {
    const codec = await loadEventCodec()
    const request = sampleEvent()
    const [a, r] = [codec.encode(annotation), codec.encode(request)]
    expect(a.subarray(2, 10).equals(r.subarray(2, 10))).toBe(false)
    expect(codec.decode(a)).toEqual(annotation)
    expect(codec.decode(r)).toEqual(request)
  })

  it('keeps the Avro schema and the in-memory schema to the same fields', () => {
    const schema = JSON.parse(readFileSync(`${EVENTS_DIR}annotation-event.avsc`, 'utf8'))
    const avroFields = schema.fields.map((f: { name: string }) => f.name).sort()
    expect(avroFields).toEqual(Object.keys(annotationEventSchema.shape).sort())
  })

  it('refuses an annotation that breaks its rules as an invalid event', async () => {
    const codec = await loadEventCodec()
    const type = avro.Type.forSchema(JSON.parse(readFileSync(`${EVENTS_DIR}annotation-event.avsc`, 'utf8')), {
      logicalTypes: {},
    })
    const good = codec.encode(annotation)
    const body = type.fromBuffer(good.subarray(10)) as Record<string, unknown>
    const invalid = Buffer.concat([good.subarray(0, 10), type.toBuffer({ ...body, organization_id: 'nope' })])
    expect(() => codec.decode(invalid)).toThrowError(/invalid event/)
  })
})
