import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parquetMetadataAsync } from 'hyparquet'
import type { ExportFormat } from '../shared/exports/contract.ts'

/** A file written to local disk on its way to the object store. */
export interface WrittenFile {
  rows: number
  bytes: number
  sha256: string
}

const NEWLINE = 0x0a
const QUOTE = 0x22

/**
 * Counts the records of text output as it passes: JSONEachRow writes one row per line (a newline
 * in a value is escaped); CSV quotes every text value, so a newline is a record's end only
 * outside quotes (a doubled quote inside a value toggles twice, leaving the state unchanged).
 */
function lineCounter(format: 'csv' | 'jsonl') {
  let lines = 0
  let quoted = false
  return {
    take(chunk: Buffer) {
      if (format === 'jsonl') {
        for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) lines++
        return
      }
      for (const byte of chunk) {
        if (byte === QUOTE) quoted = !quoted
        else if (byte === NEWLINE && !quoted) lines++
      }
    },
    /** Data rows: CSVWithNames starts with one line of column names. */
    rows: () => (format === 'csv' ? Math.max(0, lines - 1) : lines),
  }
}

/**
 * Writes `source` to `path`, streamed (memory stays bounded), hashing and measuring it on the
 * way, then counts its rows from the file itself: Parquet from its footer, text formats by their
 * record ends. The count is what the file holds, not what was asked for.
 */
export async function writePart(source: Readable, path: string, format: ExportFormat): Promise<WrittenFile> {
  const hash = createHash('sha256')
  const counter = format === 'parquet' ? undefined : lineCounter(format)
  let bytes = 0
  await pipeline(
    source,
    async function* (chunks: AsyncIterable<Buffer>) {
      for await (const chunk of chunks) {
        hash.update(chunk)
        counter?.take(chunk)
        bytes += chunk.length
        yield chunk
      }
    },
    createWriteStream(path),
  )
  const rows = counter ? counter.rows() : await parquetRows(path, bytes)
  return { rows, bytes, sha256: hash.digest('hex') }
}

/** The row count a Parquet file's footer declares; reads only the footer. */
async function parquetRows(path: string, byteLength: number): Promise<number> {
  const file = await open(path, 'r')
  try {
    const metadata = await parquetMetadataAsync({
      byteLength,
      async slice(start, end = byteLength) {
        const buffer = Buffer.alloc(end - start)
        await file.read(buffer, 0, buffer.length, start)
        return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length)
      },
    })
    return Number(metadata.num_rows)
  } finally {
    await file.close()
  }
}
