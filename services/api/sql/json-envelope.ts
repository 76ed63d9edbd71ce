/**
 * ClickHouse's `JSON` output, rewritten on the fly into Tally's envelope
 * `{"data":{"columns":[…],"rows":[…],"row_count":N,"statistics":{…}},"error":null}`. The rows pass
 * through as ClickHouse wrote them, never parsed or held whole: only the head (column names and
 * types) and the tail (row count, statistics) are read. It relies on the layout ClickHouse gives
 * that format with output_format_json_pretty_print=1: the data array opens with `\t"data":\n\t[\n`
 * and closes with `\n\t],\n\n\t"rows":` (a row's own lines are indented deeper, and text inside
 * values is escaped, so neither can occur in a row).
 */
import { Transform, type TransformCallback } from 'node:stream'

const START = Buffer.from('\t"data":\n\t[\n')
const END = Buffer.from('\n\t],\n\n\t"rows":')
/** The head holds the columns only: far below this for any statement under 100 KB. */
const MAX_HEAD = 4 * 1024 * 1024

interface Head {
  meta: { name: string; type: string }[]
}

interface Tail {
  rows: number
  statistics?: { elapsed?: number }
}

/**
 * Works on bytes, never decoding the rows: both markers are ASCII, and no byte of a multi-byte
 * UTF-8 character is, so a marker found in the bytes is the marker in the text.
 */
export function jsonEnvelope(): Transform {
  let state: 'head' | 'rows' | 'tail' = 'head'
  let pending: Buffer = Buffer.alloc(0)

  function take(chunk: Buffer, push: (bytes: Buffer) => void): void {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    if (state === 'head') {
      const at = pending.indexOf(START)
      if (at < 0) {
        if (pending.length > MAX_HEAD) throw new Error('ClickHouse JSON answer: no data array after 4 MiB')
        return
      }
      // `{ "meta": [ … ],` and blank lines: close the object after meta.
      const head = JSON.parse(
        `${pending.subarray(0, at).toString('utf8').trimEnd().replace(/,$/, '')}}`,
      ) as Head
      const columns = head.meta.map(({ name, type }) => ({ name, type }))
      push(Buffer.from(`{"data":{"columns":${JSON.stringify(columns)},"rows":[`))
      pending = pending.subarray(at + START.length)
      state = 'rows'
    }
    if (state === 'rows') {
      const at = pending.indexOf(END)
      if (at < 0) {
        // Keep what could be the start of the end marker; pass the rest on.
        const keep = Math.min(pending.length, END.length - 1)
        if (pending.length > keep) push(pending.subarray(0, pending.length - keep))
        pending = Buffer.from(pending.subarray(pending.length - keep))
        return
      }
      if (at > 0) push(pending.subarray(0, at))
      pending = Buffer.concat([Buffer.from('"rows":'), pending.subarray(at + END.length)])
      state = 'tail'
    }
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        take(chunk, (bytes) => this.push(bytes))
        callback()
      } catch (err) {
        callback(err as Error)
      }
    },
    flush(callback: TransformCallback) {
      try {
        if (state !== 'tail') throw new Error(`ClickHouse JSON answer ended in its ${state}`)
        const tail = JSON.parse(`{${pending.toString('utf8')}`) as Tail
        // Not rows_read nor bytes_read: index analysis reads granules this organization shares
        // with its neighbours, so those counts would tell whether a guessed value of theirs exists.
        const statistics = { elapsed_ms: Math.round((tail.statistics?.elapsed ?? 0) * 1000) }
        this.push(`],"row_count":${tail.rows},"statistics":${JSON.stringify(statistics)}},"error":null}`)
        callback()
      } catch (err) {
        callback(err as Error)
      }
    },
  })
}
