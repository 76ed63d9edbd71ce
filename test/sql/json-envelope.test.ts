import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { describe, expect, it } from 'vitest'
import { jsonEnvelope } from '../../services/api/sql/json-envelope.ts'

// ClickHouse's JSON output with output_format_json_pretty_print=1, as the server writes it: the
// values hold multi-byte characters and the markers' text (escaped, as ClickHouse escapes it).
const rows = [{ s: 'héllo 🙂 \t"data":\n\t[\n' }, { s: '\n\t],\n\n\t"rows": 9' }, { s: 'ß' }]
const clickhouse = Buffer.from(
  [
    '{',
    '\t"meta":',
    '\t[',
    '\t\t{',
    '\t\t\t"name": "s",',
    '\t\t\t"type": "String"',
    '\t\t}',
    '\t],',
    '',
    '\t"data":',
    '\t[',
    rows.map((r) => `\t\t{\n\t\t\t"s": ${JSON.stringify(r.s)}\n\t\t}`).join(',\n'),
    '\t],',
    '',
    `\t"rows": ${rows.length},`,
    '',
    '\t"statistics":',
    '\t{',
    '\t\t"elapsed": 0.0042,',
    '\t\t"rows_read": 3,',
    '\t\t"bytes_read": 99',
    '\t}',
    '}',
    '',
  ].join('\n'),
)

const rewrite = (chunks: Buffer[]) => text(Readable.from(chunks).pipe(jsonEnvelope()))
const expected = {
  data: { columns: [{ name: 's', type: 'String' }], rows, row_count: 3, statistics: { elapsed_ms: 4 } },
  error: null,
}

describe("the SQL answer's envelope, rewritten from ClickHouse's JSON on the fly", () => {
  it('is the same whole and however the bytes are cut, through characters and markers alike', async () => {
    expect(JSON.parse(await rewrite([clickhouse]))).toEqual(expected)
    for (let size = 1; size <= 17; size++) {
      const chunks = []
      for (let at = 0; at < clickhouse.length; at += size) chunks.push(clickhouse.subarray(at, at + size))
      expect(JSON.parse(await rewrite(chunks)), `chunks of ${size} bytes`).toEqual(expected)
    }
  })

  it('refuses an answer without its data array or cut before its end', async () => {
    await expect(rewrite([Buffer.from('{"meta": []}')])).rejects.toThrow(/ended in its head/)
    await expect(rewrite([clickhouse.subarray(0, clickhouse.length / 2)])).rejects.toThrow(
      /ended in its rows/,
    )
  })
})
