import { randomBytes } from 'node:crypto'
import type avro from 'avsc'

// Avro object container files (Avro 1.12 specification, "Object Container Files"): the magic
// `Obj` 01, a metadata map holding the schema, a 16-byte sync marker; then blocks, each a count of
// records, their size in bytes, the records' binary bodies one after another, and the marker
// again. What ClickHouse's `Avro` input format reads.
const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01])

/** An Avro `long` (zig-zag, then variable length), for counts and sizes below 2^53. */
function long(n: number): Buffer {
  const out: number[] = []
  // Zig-zag without 32-bit operators: counts and sizes can exceed 2^31.
  let v = n >= 0 ? 2 * n : -2 * n - 1
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80)
    v = Math.floor(v / 0x80)
  }
  out.push(v)
  return Buffer.from(out)
}

const bytesOf = (text: string) => {
  const b = Buffer.from(text, 'utf8')
  return Buffer.concat([long(b.length), b])
}

export interface AvroContainer {
  /** One container file of one block holding these record bodies, in order. */
  frame(bodies: readonly Buffer[]): Buffer
}

/** Frames record bodies of `schema` (each the binary encoding of one record) as a container file. */
export function avroContainer(schema: avro.Schema): AvroContainer {
  const sync = randomBytes(16)
  const header = Buffer.concat([
    MAGIC,
    // The metadata map: one block of two entries, then the empty block that ends it.
    long(2),
    bytesOf('avro.schema'),
    bytesOf(JSON.stringify(schema)),
    bytesOf('avro.codec'),
    bytesOf('null'),
    long(0),
    sync,
  ])
  return {
    frame(bodies) {
      let size = 0
      for (const b of bodies) size += b.length
      return Buffer.concat([header, long(bodies.length), long(size), ...bodies, sync])
    },
  }
}
