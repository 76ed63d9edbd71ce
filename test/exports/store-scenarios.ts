import { expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import type { TestTally } from '../support/harness.ts'
import {
  download,
  eventsInWindow,
  expectedRows,
  exportWindow,
  insertRows,
  normalise,
  readParquet,
  sha256,
  WINDOW,
} from './support.ts'

/** The instance-admin key of these suites' Tallys (organization deletion). */
export const ADMIN_KEY = `tally-admin-${'k'.repeat(32)}`

/** Rows per file in these suites (TALLY_EXPORT_PART_ROWS): 23 rows make files of 7, 7, 7 and 2. */
export const PART_ROWS = 7

/** CSV as ClickHouse writes it (CSVWithNames: every text value quoted, quotes doubled). */
function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = []
  let field = ''
  let record: string[] = []
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      record.push(field)
      field = ''
    } else if (c === '\n') {
      record.push(field)
      records.push(record)
      record = []
      field = ''
    } else field += c
  }
  const [header = [], ...rows] = records
  return rows.map((r) => Object.fromEntries(header.map((name, i) => [name, r[i] as string])))
}

/** Text rows from CSV put back into the types ClickHouse's JSON gives, for comparison. */
function typedCsvRow(row: Record<string, string>): Record<string, unknown> {
  const number = (v: string) => Number(v)
  return normalise({
    ...row,
    latency: number(row.latency as string),
    time_to_first_token: row.time_to_first_token === '\\N' ? null : number(row.time_to_first_token as string),
    status: number(row.status as string),
    prompt_tokens: number(row.prompt_tokens as string),
    completion_tokens: number(row.completion_tokens as string),
    total_tokens: number(row.total_tokens as string),
    cost: number(row.cost as string),
    cached: row.cached === 'true',
    // ClickHouse writes a Map in CSV as its text form: {'key':'value',…}, with \' and \n escaped.
    properties: row.properties,
  })
}

/**
 * What must hold whichever object store keeps the files: the files, read back by a real reader,
 * hold exactly the window's rows, split at PART_ROWS; the manifest's sizes and checksums are the
 * files'; links work without a key; another organization's rows and exports stay out of reach.
 */
export function exportScenarios(tally: () => TestTally) {
  it('exports a window to Parquet files that a Parquet reader reads back as exactly its rows', async () => {
    const t = tally()
    const org = await t.newOrg()
    const other = await t.newOrg()
    const inside = eventsInWindow(org.organizationId, 23)
    // Just outside both ends, and the other organization's rows inside the window.
    const outside = eventsInWindow(org.organizationId, 2).map((e, i) => ({
      ...e,
      created_at: new Date(i === 0 ? Date.parse(WINDOW.from) - 1 : Date.parse(WINDOW.to)),
    }))
    await insertRows(t, [...inside, ...outside, ...eventsInWindow(other.organizationId, 5)])

    const done = await exportWindow(t, org, { format: 'parquet' })
    const m = done.manifest
    expect(m.window).toEqual(WINDOW)
    expect(m.total_rows).toBe(23)
    expect(m.counted_rows).toBe(23)
    expect(m.files.map((f: { name: string; rows: number }) => [f.name, f.rows])).toEqual([
      ['part-00001.parquet', 7],
      ['part-00002.parquet', 7],
      ['part-00003.parquet', 7],
      ['part-00004.parquet', 2],
    ])
    expect(done.download.files.map((f: { name: string }) => f.name)).toEqual(
      m.files.map((f: { name: string }) => f.name),
    )

    const rows: Record<string, unknown>[] = []
    for (const [i, link] of done.download.files.entries()) {
      const file = await download(link.url)
      expect(file.status).toBe(200)
      expect(file.body.length).toBe(m.files[i].bytes)
      expect(sha256(file.body)).toBe(m.files[i].sha256)
      rows.push(...(await readParquet(file.body)).map(normalise))
    }
    const expected = await expectedRows(t, org.organizationId)
    expect(expected).toHaveLength(23)
    expect(rows).toEqual(expected)
    expect(new Set(rows.map((r) => r.organization_id))).toEqual(new Set([org.organizationId]))

    // The manifest beside the files is the one GET answers.
    const stored = await download(done.download.manifest_url)
    expect(stored.status).toBe(200)
    expect(JSON.parse(stored.body.toString())).toEqual(m)
  })

  it('exports JSONL and CSV with the same rows, and applies the filter', async () => {
    const t = tally()
    const org = await t.newOrg()
    await insertRows(t, eventsInWindow(org.organizationId, 10))
    const expected = await expectedRows(t, org.organizationId)

    const jsonl = await exportWindow(t, org, { format: 'jsonl' })
    const jsonRows: Record<string, unknown>[] = []
    for (const link of jsonl.download.files) {
      const file = await download(link.url)
      expect(file.type).toBe('application/x-ndjson')
      jsonRows.push(
        ...file.body
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((line) => normalise(JSON.parse(line))),
      )
    }
    expect(jsonRows).toEqual(expected)

    const csv = await exportWindow(t, org, { format: 'csv' })
    expect(csv.manifest.files.map((f: { rows: number }) => f.rows)).toEqual([7, 3])
    const csvRows: Record<string, unknown>[] = []
    for (const link of csv.download.files) {
      const file = await download(link.url)
      expect(file.type).toMatch(/^text\/csv/)
      csvRows.push(...parseCsv(file.body.toString()).map(typedCsvRow))
    }
    // Maps are ClickHouse's text in CSV: compared apart.
    const withoutMaps = ({ properties, scores, score_categories, ...rest }: Record<string, unknown>) => rest
    expect(csvRows.map(withoutMaps)).toEqual(expected.map(withoutMaps))
    expect(csvRows[1]?.properties).toBe(`{'env':'dev','note':'say "hi",\\nrow 1'}`)
    expect(csvRows.map((r) => [r.scores, r.score_categories])).toEqual(Array(10).fill(['{}', '{}']))

    const filtered = await exportWindow(t, org, {
      format: 'jsonl',
      filter: { request_response_rmt: { model: { equals: 'claude-3-5-haiku' } } },
    })
    expect(filtered.manifest.total_rows).toBe(5)
    expect(filtered.manifest.counted_rows).toBe(5)
    const lines = (await download(filtered.download.files[0].url)).body.toString().split('\n').filter(Boolean)
    expect(lines.map((l) => JSON.parse(l).model)).toEqual(Array(5).fill('claude-3-5-haiku'))
  })

  it('succeeds with no files for an empty window, saying so in the manifest', async () => {
    const t = tally()
    const org = await t.newOrg()
    const done = await exportWindow(t, org, { format: 'parquet' })
    expect(done.manifest).toMatchObject({ files: [], total_rows: 0, counted_rows: 0 })
  })

  it("answers 404 for another organization's export, and its links serve only its own files", async () => {
    const t = tally()
    const org = await t.newOrg()
    const other = await t.newOrg()
    await insertRows(t, eventsInWindow(org.organizationId, 3))
    const done = await exportWindow(t, org, { format: 'jsonl' })
    const theirs = apiAs(t.app, other)
    expect(await theirs.get(`/v1/exports/${done.id}`)).toMatchObject({
      status: 404,
      error: 'Export not found',
    })
    expect((await theirs.get('/v1/exports')).data).toEqual([])
    // A link is for its own key only: another key under the same signature is refused.
    const link = new URL(done.download.files[0].url)
    if (t.blobs.kind === 'filesystem') {
      link.pathname = link.pathname.replace(org.organizationId, other.organizationId)
      expect((await download(link.toString())).status).toBe(403)
    } else {
      link.pathname = link.pathname.replace('part-00001', 'part-00002')
      expect((await download(link.toString())).status).toBe(403)
    }
  })

  it("deletes an organization's export files with the organization, and only its", async () => {
    const t = tally()
    const doomed = await t.newOrg()
    const kept = await t.newOrg()
    for (const org of [doomed, kept]) await insertRows(t, eventsInWindow(org.organizationId, 9))
    const gone = await exportWindow(t, doomed, { format: 'parquet' })
    const stays = await exportWindow(t, kept, { format: 'parquet' })
    const urls = (e: { download: { manifest_url: string; files: { url: string }[] } }) => [
      e.download.manifest_url,
      ...e.download.files.map((f) => f.url),
    ]
    for (const url of [...urls(gone), ...urls(stays)]) expect((await download(url)).status).toBe(200)

    const admin = apiAs(t.app, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    expect((await admin.delete(`/admin/v1/organizations/${doomed.organizationId}`)).status).toBe(200)

    // The links were signed before: what answers now is the store itself.
    for (const url of urls(gone)) expect((await download(url)).status).toBe(404)
    for (const url of urls(stays)) expect((await download(url)).status).toBe(200)
  })
}
