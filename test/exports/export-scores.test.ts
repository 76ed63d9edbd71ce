import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestOrg, TestTally } from '../support/harness.ts'
import { type ScoreRow, scoreRow } from '../support/scores.ts'
import {
  download,
  eventsInWindow,
  exportWindow,
  insertRows,
  normalise,
  readParquet,
  startExportTally,
} from './support.ts'

/**
 * The annotations an exported request row carries: its live scores (`scores`, name → number,
 * averaged per name; `score_categories`, name → category) and its properties with those set after
 * the fact applied. Scores and updates go straight into ClickHouse, as the ingest writes them.
 */

const SECRET = 'SECRET-OF-THE-OTHER-ORGANIZATION'

let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({ env: { TALLY_EXPORT_POLL_INTERVAL: '50ms', TALLY_EXPORT_PART_ROWS: '3' } })
})
afterAll(() => tally?.close())

const score = (organizationId: string, fields: Partial<ScoreRow>) =>
  scoreRow(organizationId, fields, '2026-10-05 10:00:00.000')

const update = (organizationId: string, requestId: string, key: string, value: string, version: number) => ({
  organization_id: organizationId,
  request_id: requestId,
  key,
  value,
  updated_at: '2026-10-05 11:00:00.000',
  version,
})

/** One insert per row: each row its own part, so that FINAL, not a merge, does the collapsing. */
async function insert(table: string, rows: Record<string, unknown>[]): Promise<void> {
  for (const row of rows) await tally.clickhouse.insert({ table, values: [row], format: 'JSONEachRow' })
}

type Row = Record<string, unknown> & { request_id: string }

describe('exported rows carry scores and current properties', () => {
  let org: TestOrg
  let other: TestOrg
  let ids: string[]
  let theirs: string[]

  beforeAll(async () => {
    org = await tally.newOrg()
    other = await tally.newOrg()
    const mine = eventsInWindow(org.organizationId, 4)
    const foreign = eventsInWindow(other.organizationId, 2)
    await insertRows(tally, [...mine, ...foreign])
    ids = mine.map((e) => e.request_id)
    theirs = foreign.map((e) => e.request_id)
    const [r0, r1, r2] = ids as [string, string, string]
    const O = org.organizationId
    const X = other.organizationId
    const upserted = randomUUID()
    const deleted = randomUUID()
    await insert('scores', [
      // Two sources, one name: averaged.
      score(O, { request_id: r0, value: 0.5 }),
      score(O, { request_id: r0, value: 1, source: 'eval' }),
      score(O, { request_id: r0, name: 'correct', data_type: 'boolean', value: 1 }),
      score(O, { request_id: r0, name: 'topic', data_type: 'categorical', string_value: 'billing' }),
      // An upsert: its latest version only, not an average of its versions.
      score(O, { id: upserted, request_id: r0, name: 'accuracy', value: 0.2, version: 1 }),
      score(O, { id: upserted, request_id: r0, name: 'accuracy', value: 0.4, version: 2 }),
      // Deleted after it was given: gone.
      score(O, { id: deleted, request_id: r1, name: 'toxicity', value: 1, version: 1 }),
      score(O, { id: deleted, request_id: r1, name: 'toxicity', value: 1, version: 2, is_deleted: 1 }),
      // A score of the request's session is not the request's.
      score(O, {
        target_kind: 'session',
        session_id: 'session-1',
        name: 'resolved',
        data_type: 'boolean',
        value: 1,
      }),
      // The other organization's scores: of its own requests, and of this organization's request id.
      score(X, { request_id: theirs[0], name: SECRET, value: 7 }),
      score(X, { request_id: r2, name: SECRET, value: 7 }),
      score(X, { request_id: r2, name: 'topic', data_type: 'categorical', string_value: SECRET }),
    ])
    await insert('request_property_updates', [
      update(O, r0, 'env', 'staging', 1),
      update(O, r0, 'env', 'canary', 3),
      update(O, r0, 'env', 'qa', 2),
      update(O, r0, 'reviewed', 'yes', 1),
      update(X, r2, 'env', SECRET, 9),
      update(X, theirs[0] as string, 'env', SECRET, 1),
    ])
  })

  const expectRows = (rows: Row[]) => {
    expect(rows.map((r) => r.request_id)).toEqual(ids)
    const [r0, r1, r2, r3] = rows as [Row, Row, Row, Row]
    expect(r0.scores).toEqual({ accuracy: 0.4, correct: 1, helpfulness: 0.75 })
    expect(r0.score_categories).toEqual({ topic: 'billing' })
    expect(r0.properties).toEqual({ env: 'canary', note: 'say "hi",\nrow 0', reviewed: 'yes' })
    for (const row of [r1, r2, r3]) {
      expect(row.scores).toEqual({})
      expect(row.score_categories).toEqual({})
    }
    expect(r1.properties).toEqual({ env: 'dev', note: 'say "hi",\nrow 1' })
    expect(r2.properties).toEqual({ env: 'prod', note: 'say "hi",\nrow 2' })
  }

  it('writes them to JSONL, exactly once per request', async () => {
    const done = await exportWindow(tally, org, { format: 'jsonl' })
    expect(done.manifest.columns.slice(-2)).toEqual(['scores', 'score_categories'])
    expect(done.manifest).toMatchObject({ total_rows: 4, counted_rows: 4 })
    const rows: Row[] = []
    for (const link of done.download.files) {
      const text = (await download(link.url)).body.toString()
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain(other.organizationId)
      rows.push(
        ...text
          .split('\n')
          .filter(Boolean)
          .map((line) => normalise(JSON.parse(line)) as Row),
      )
    }
    expect(Object.keys(rows[0] ?? {})).toEqual(done.manifest.columns)
    expectRows(rows)
  })

  it('writes them to Parquet as maps', async () => {
    const done = await exportWindow(tally, org, { format: 'parquet' })
    expect(done.manifest).toMatchObject({ total_rows: 4, counted_rows: 4 })
    const rows: Row[] = []
    for (const link of done.download.files) {
      const file = await download(link.url)
      expect(file.body.toString('latin1')).not.toContain(SECRET)
      rows.push(...((await readParquet(file.body)).map(normalise) as Row[]))
    }
    expectRows(rows)
  })

  it("writes them to CSV in ClickHouse's map text, names in order", async () => {
    const done = await exportWindow(tally, org, { format: 'csv' })
    const text = (await Promise.all(done.download.files.map((f: { url: string }) => download(f.url))))
      .map((f) => f.body.toString())
      .join('')
    expect(text).not.toContain(SECRET)
    const [header] = text.split('\n')
    expect(header?.split(',').slice(-2)).toEqual(['"scores"', '"score_categories"'])
    expect(text).toContain(`"{'accuracy':0.4,'correct':1,'helpfulness':0.75}","{'topic':'billing'}"`)
  })

  it("never shows this organization's scores or updates in the other organization's export", async () => {
    const done = await exportWindow(tally, other, { format: 'jsonl' })
    expect(done.manifest).toMatchObject({ total_rows: 2, counted_rows: 2 })
    const rows = (await download(done.download.files[0].url)).body
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Row)
    expect(rows.map((r) => r.request_id)).toEqual(theirs)
    // Its own score and update of its own request, nothing of the first organization's.
    expect(rows[0]?.scores).toEqual({ [SECRET]: 7 })
    expect(rows[0]?.properties).toMatchObject({ env: SECRET })
    expect(rows[1]?.scores).toEqual({})
  })
})
