import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import avro from 'avsc'
import { annotationEventSchema } from './annotation-event.ts'
import type { TallyEvent } from './event.ts'
import { type RequestEvent, requestEventSchema } from './request-event.ts'

// Avro single-object encoding: marker C3 01, the writer schema's CRC-64-AVRO fingerprint
// (little-endian), then the binary body. A reader finds the writer schema by fingerprint and
// resolves it to its own, so producers and consumers can be upgraded one at a time.
const MARKER = Buffer.from([0xc3, 0x01])
const HEADER_LENGTH = 10

const EMPTY = 0xc15d213aa4d7a795n
const MASK = 0xffffffffffffffffn
const TABLE = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i)
  for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n) & MASK)
  return fp
})

/** The Rabin fingerprint the Avro specification names CRC-64-AVRO. */
export function crc64Avro(bytes: Uint8Array): bigint {
  let fp = EMPTY
  for (const b of bytes) fp = (fp >> 8n) ^ (TABLE[Number((fp ^ BigInt(b)) & 0xffn)] as bigint)
  return fp
}

/** Fingerprint of a schema's Parsing Canonical Form, as 8 little-endian bytes. */
function schemaFingerprint(type: avro.Type): Buffer {
  const out = Buffer.alloc(8)
  out.writeBigUInt64LE(crc64Avro(Buffer.from(JSON.stringify(type.schema()), 'utf8')))
  return out
}

/** Avro timestamp-millis as a JS Date in memory. */
class TimestampMillis extends avro.types.LogicalType {
  override _fromValue(value: unknown): Date {
    return new Date(value as number)
  }
  override _toValue(value: unknown): unknown {
    return value instanceof Date ? value.getTime() : value
  }
  override _resolve(type: avro.Type): ((value: unknown) => Date) | undefined {
    if (avro.Type.isType(type, 'long', 'logical:timestamp-millis')) return (v) => this._fromValue(v)
    return undefined
  }
}

// A fresh object per type: avsc keeps its registry of named types in the options.
const typeOptions = () => ({ logicalTypes: { 'timestamp-millis': TimestampMillis } })

/** The message cannot be decoded: it belongs in the dead-letter topic, not in a retry. */
export class DecodeError extends Error {}

/** An event the schema cannot represent (an int beyond int32…): the caller's fault, never retried. */
export class EncodeError extends Error {
  /** Position of the event in the batch being encoded. */
  index = 0
}

/** Encodes a batch; an event that cannot be encoded throws an EncodeError carrying its index. */
export function encodeEach<T>(codec: Codec<T>, values: T[]): Buffer[] {
  return values.map((value, index) => {
    try {
      return codec.encode(value)
    } catch (err) {
      const e = new EncodeError(err instanceof Error ? err.message : String(err))
      e.index = index
      throw e
    }
  })
}

export interface Codec<T> {
  encode(value: T): Buffer
  decode(bytes: Buffer): T
  /** The writer schemas it reads, by fingerprint (hex). */
  readonly fingerprints: ReadonlySet<string>
}

/** A codec of one record type, which can also give a value's Avro body alone. */
export interface RecordCodec<T> extends Codec<T> {
  /** The schema it writes (and reads into). */
  readonly schema: avro.Schema
  /**
   * The value's Avro binary body in this schema, without the single-object header: the bytes it
   * was decoded from when they were written in this very schema (by any codec of it in this
   * process), else encoded now. What a container of these records (avro-container.ts) holds.
   */
  body(value: T): Buffer
}

// The body a decoded value came from, with the fingerprint of the schema it was written in: a
// value read in its writer's own schema need not be encoded again to be written elsewhere in it.
// A hidden property of the value (not enumerable: not compared, not copied by a spread, so a
// changed copy is encoded anew), a view into the message's buffer, not a copy. A WeakMap of them
// cost the ingest more in garbage collection than the encoding it saves (measured).
const DECODED_FROM = Symbol('decoded from')
interface DecodedFrom {
  fingerprint: string
  body: Buffer
}

export function createAvroCodec<T>(
  readerSchema: avro.Schema,
  knownWriterSchemas: avro.Schema[],
  validate: (value: unknown) => T,
): RecordCodec<T> {
  const reader = avro.Type.forSchema(readerSchema, typeOptions())
  const header = Buffer.concat([MARKER, schemaFingerprint(reader)])
  const own = header.subarray(2).toString('hex')
  const resolvers = new Map<string, avro.Resolver | null>([[own, null]])
  for (const schema of knownWriterSchemas) {
    const writer = avro.Type.forSchema(schema, typeOptions())
    const key = schemaFingerprint(writer).toString('hex')
    if (!resolvers.has(key)) resolvers.set(key, reader.createResolver(writer))
  }
  // The header is written once; each event is encoded after it in this scratch buffer (grown
  // when an event does not fit) and copied out once, instead of avsc's zero-filled toBuffer copy
  // followed by a second copy to prepend the header.
  let scratch = Buffer.allocUnsafe(64 * 1024)
  header.copy(scratch)
  const encode = (value: T) => {
    let end = reader.encode(value, scratch, header.length)
    if (end < 0) {
      scratch = Buffer.allocUnsafe(Math.max(2 * scratch.length, scratch.length - end))
      header.copy(scratch)
      end = reader.encode(value, scratch, header.length)
    }
    return Buffer.from(scratch.subarray(0, end))
  }
  return {
    fingerprints: new Set(resolvers.keys()),
    schema: reader.schema(),
    encode,
    body(value) {
      const decoded = (value as { [DECODED_FROM]?: DecodedFrom })[DECODED_FROM]
      if (decoded?.fingerprint === own) return decoded.body
      return encode(value).subarray(HEADER_LENGTH)
    },
    decode(bytes) {
      if (bytes.length < HEADER_LENGTH || bytes[0] !== MARKER[0] || bytes[1] !== MARKER[1]) {
        throw new DecodeError('not Avro single-object encoded (missing C3 01 marker)')
      }
      const key = bytes.subarray(2, HEADER_LENGTH).toString('hex')
      const resolver = resolvers.get(key)
      if (resolver === undefined) throw new DecodeError(`unknown writer schema fingerprint ${key}`)
      let value: unknown
      try {
        value = reader.fromBuffer(bytes.subarray(HEADER_LENGTH), resolver ?? undefined)
      } catch (err) {
        throw new DecodeError(`undecodable Avro body: ${(err as Error).message}`)
      }
      let valid: T
      try {
        valid = validate(value)
      } catch (err) {
        throw new DecodeError(`invalid event: ${(err as Error).message}`)
      }
      if (resolver === null && typeof valid === 'object' && valid !== null)
        Object.defineProperty(valid, DECODED_FROM, {
          value: { fingerprint: own, body: bytes.subarray(HEADER_LENGTH) } satisfies DecodedFrom,
        })
      return valid
    },
  }
}

export const EVENTS_DIR = new URL('../../../schemas/events/', import.meta.url).pathname

/** One record's codec from `<stem>.avsc` (current) and every older `<stem>.v*.avsc` beside it. */
async function loadCodec<T>(
  dir: string,
  stem: string,
  validate: (value: unknown) => T,
): Promise<RecordCodec<T>> {
  const files = (await readdir(dir)).filter(
    (f) => (f === `${stem}.avsc` || f.startsWith(`${stem}.v`)) && f.endsWith('.avsc'),
  )
  const schemas = new Map<string, avro.Schema>()
  for (const f of files) schemas.set(f, JSON.parse(await readFile(join(dir, f), 'utf8')))
  const current = schemas.get(`${stem}.avsc`)
  if (!current) throw new Error(`${dir} has no ${stem}.avsc`)
  return createAvroCodec(current, [...schemas.values()], validate)
}

/**
 * The event topic's codec: request events (request-event.avsc, the current schema; every
 * request-event.v*.avsc is an older writer schema still read) and annotation events
 * (annotation-event.avsc). A message names its writer schema by fingerprint, which says which of
 * the two it is.
 */
export async function loadEventCodec(dir = EVENTS_DIR): Promise<Codec<TallyEvent>> {
  const requests = await loadRequestCodec(dir)
  const annotations = await loadCodec(dir, 'annotation-event', (v) => annotationEventSchema.parse(v))
  const byFingerprint = new Map<string, Codec<TallyEvent>>()
  for (const codec of [requests, annotations] as Codec<TallyEvent>[])
    for (const key of codec.fingerprints) byFingerprint.set(key, codec)
  return {
    fingerprints: new Set(byFingerprint.keys()),
    encode: (value) => ('kind' in value ? annotations.encode(value) : requests.encode(value)),
    decode(bytes) {
      const key = bytes.length < HEADER_LENGTH ? '' : bytes.subarray(2, HEADER_LENGTH).toString('hex')
      // Unknown or not single-object encoded: the request codec names what is wrong.
      return (byFingerprint.get(key) ?? requests).decode(bytes)
    },
  }
}

/** The request events' codec alone (request-event.avsc and its older writer schemas). */
export function loadRequestCodec(dir = EVENTS_DIR): Promise<RecordCodec<RequestEvent>> {
  return loadCodec(dir, 'request-event', (v) => requestEventSchema.parse(v))
}
