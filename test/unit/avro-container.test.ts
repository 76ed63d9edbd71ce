import { Readable } from 'node:stream'
import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { avroContainer } from '../../services/ingest/avro-container.ts'

const schema = {
  type: 'record',
  name: 'Row',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'text', type: 'string' },
  ],
} satisfies avro.Schema

/** The records of a container file, read by avsc's own container decoder. */
async function read(file: Buffer): Promise<unknown[]> {
  const records: unknown[] = []
  const decoder = new avro.streams.BlockDecoder()
  decoder.on('data', (r: unknown) => records.push(r))
  const done = new Promise((resolve, reject) => decoder.on('end', resolve).on('error', reject))
  Readable.from([file]).pipe(decoder)
  await done
  return records
}

describe('Avro container files', () => {
  const type = avro.Type.forSchema(schema)

  it('hold the record bodies given, in order, readable by another Avro implementation', async () => {
    const rows = [
      { id: 1, text: 'one' },
      { id: -(2 ** 40), text: 'ümlaut 😀 \u0000' },
      { id: 3, text: 'x'.repeat(100_000) },
    ]
    const file = avroContainer(schema).frame(rows.map((r) => type.toBuffer(r)))
    expect(await read(file)).toEqual(rows)
  })

  it('frame an empty block and counts past one varint byte', async () => {
    const container = avroContainer(schema)
    expect(await read(container.frame([]))).toEqual([])
    const many = Array.from({ length: 300 }, (_, id) => ({ id, text: `${id}` }))
    expect(await read(container.frame(many.map((r) => type.toBuffer(r))))).toEqual(many)
  })

  it('end each block with the sync marker its header names', () => {
    const file = avroContainer(schema).frame([type.toBuffer({ id: 1, text: 'a' })])
    expect(file.subarray(0, 4)).toEqual(Buffer.from('Obj\x01', 'latin1'))
    const sync = file.subarray(file.length - 16)
    expect(file.indexOf(sync)).toBeLessThan(file.length - 16)
  })
})
