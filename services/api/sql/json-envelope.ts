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
import { StringDecoder } from 'node:string_decoder'

const START = '\t"data":\n\t[\n'
const END = '\n\t],\n\n\t"rows":'
/** The head holds the columns only: far below this for any statement under 100 KB. */
const MAX_HEAD = 4 * 1024 * 1024

interface Head {
  meta: { name: string; type: string }[]
}

interface Tail {
  rows: number
  statistics?: { elapsed?: number }
}

export function jsonEnvelope(): Transform {
  const decoder = new StringDecoder('utf8')
  let state: 'head' | 'rows' | 'tail' = 'head'
  let pending = ''

  function take(text: string, push: (chunk: string) => void): void {
    pending += text
    if (state === 'head') {
      const at = pending.indexOf(START)
      if (at < 0) {
        if (pending.length > MAX_HEAD) throw new Error('ClickHouse JSON answer: no data array after 4 MiB')
        return
      }
      // `{ "meta": [ … ],` and blank lines: close the object after meta.
      const head = JSON.parse(`${pending.slice(0, at).trimEnd().replace(/,$/, '')}}`) as Head
      const columns = head.meta.map(({ name, type }) => ({ name, type }))
      push(`{"data":{"columns":${JSON.stringify(columns)},"rows":[`)
      pending = pending.slice(at + START.length)
      state = 'rows'
    }
    if (state === 'rows') {
      const at = pending.indexOf(END)
      if (at < 0) {
        // Keep what could be the start of the end marker; pass the rest on.
        const keep = Math.min(pending.length, END.length - 1)
        if (pending.length > keep) push(pending.slice(0, pending.length - keep))
        pending = pending.slice(pending.length - keep)
        return
      }
      if (at > 0) push(pending.slice(0, at))
      pending = `"rows":${pending.slice(at + END.length)}`
      state = 'tail'
    }
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        take(decoder.write(chunk), (text) => this.push(text))
        callback()
      } catch (err) {
        callback(err as Error)
      }
    },
    flush(callback: TransformCallback) {
      try {
        take(decoder.end(), (text) => this.push(text))
        if (state !== 'tail') throw new Error(`ClickHouse JSON answer ended in its ${state}`)
        const tail = JSON.parse(`{${pending}`) as Tail
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
