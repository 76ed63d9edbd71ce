import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ExportQueries } from '../../services/exporter/query.ts'
import { CountMismatch, LeaseLost, runExport } from '../../services/exporter/run-export.ts'
import { apiAs } from '../support/api.ts'
import type { TestOrg, TestTally } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'
import { waitFor } from '../support/wait.ts'
import { eventsInWindow, exportWorkers, finished, insertRows, startExportTally, WINDOW } from './support.ts'

// This Tally runs no exporter of its own: each test starts the workers it is about, as exporter
// processes would, over the same Postgres, ClickHouse and store.
let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({
    roles: { api: true, ingest: true, dispatcher: true, exporter: false },
    env: { TALLY_EXPORT_MAX_PENDING: '8' },
  })
})
afterAll(() => tally?.close())
const workers = exportWorkers(() => tally)
const worker = workers.start

async function queued(org: TestOrg, format = 'jsonl'): Promise<string> {
  const res = await apiAs(tally.app, org).post('/v1/exports', { ...WINDOW, format })
  expect(res.status).toBe(201)
  return res.data.id
}

/** Makes the filesystem store fail for this organization's exports: a file where their folder goes. */
function blockStore(org: TestOrg): () => void {
  const exportsDir = resolve(tally.config.TALLY_DATA_DIR, 'blobs', 'objects', 'exports')
  mkdirSync(exportsDir, { recursive: true })
  const blocker = join(exportsDir, org.organizationId)
  writeFileSync(blocker, 'not a folder')
  return () => rmSync(blocker)
}

describe('failures are retried as data and kept', () => {
  it('retries a failed attempt after the schedule says, then succeeds, the reason shown meanwhile', async () => {
    const org = await tally.newOrg()
    await insertRows(tally, eventsInWindow(org.organizationId, 6))
    const unblock = blockStore(org)
    const id = await queued(org)
    await worker()
    const api = apiAs(tally.app, org)
    // Attempt 1 fails, attempt 2 follows 50 ms later and fails: the next waits 3 s.
    const waiting = await waitFor(
      async () => {
        const got = (await api.get(`/v1/exports/${id}`)).data
        return got.attempts === 2 && got.status === 'queued' ? got : null
      },
      { what: 'two failed attempts' },
    )
    expect(waiting.last_error).toBe('I/O error ENOTDIR')
    expect(new Date(waiting.next_attempt_at).getTime()).toBeGreaterThan(Date.now())
    unblock()
    const done = await finished(api, id)
    expect(done).toMatchObject({ status: 'succeeded', attempts: 3, last_error: null })
    expect(done.manifest.total_rows).toBe(6)
  })

  it('fails the export after the last attempt, with the reason, and counts it', async () => {
    const org = await tally.newOrg()
    await insertRows(tally, eventsInWindow(org.organizationId, 2))
    blockStore(org)
    const failedBefore = await metric('tally_exports_total', '{outcome="failed"}')
    const id = await queued(org, 'parquet')
    await worker({ retrySchedule: [50, 50] })
    const done = await finished(apiAs(tally.app, org), id)
    expect(done).toMatchObject({
      status: 'failed',
      attempts: 3,
      last_error: 'I/O error ENOTDIR',
      manifest: null,
    })
    expect(done.download).toBeNull()
    expect(await metric('tally_exports_total', '{outcome="failed"}')).toBe(failedBefore + 1)
  })
})

describe('leases', () => {
  it('takes over the export of a process that died holding it, and the dead claim can write nothing', async () => {
    const org = await tally.newOrg()
    await insertRows(tally, eventsInWindow(org.organizationId, 7))
    const id = await queued(org)
    // A process claims it and dies: its lease is never renewed.
    const dead = await workers.jobs.claim(300, 1024 ** 4)
    expect(dead?.id).toBe(id)
    await worker()
    const done = await finished(apiAs(tally.app, org), id)
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 })
    expect(done.manifest.files.map((f: { rows: number }) => f.rows)).toEqual([5, 2])
    if (!dead) throw new Error('unreachable')
    expect(await workers.jobs.retry(dead, 'late', 0)).toBe(false)
    expect(await workers.jobs.fail(dead, 'late')).toBe(false)
    // Woken up late, the dead claim's run writes nothing: its lease is checked before every write.
    const deps = {
      queries: workers.queries,
      blobs: tally.blobs,
      partRows: 5,
      stepTimeoutMs: 30_000,
      countBytes: async () => {},
      scratchDir: workers.scratch.dir,
    }
    const late = runExport(deps, dead, new AbortController().signal, () => workers.jobs.renew(dead, 1_000))
    await expect(late).rejects.toThrow(LeaseLost)
    expect((await apiAs(tally.app, org).get(`/v1/exports/${id}`)).data.status).toBe('succeeded')
  })

  it('runs every export exactly once across several workers claiming at once', async () => {
    const org = await tally.newOrg()
    await insertRows(tally, eventsInWindow(org.organizationId, 12))
    const succeededBefore = await metric('tally_exports_total', '{outcome="succeeded"}')
    const rowsBefore = await metric('tally_export_rows_total', '{format="csv"}')
    const ids = await Promise.all(Array.from({ length: 8 }, () => queued(org, 'csv')))
    await worker({ concurrency: 2 })
    await worker({ concurrency: 2 })
    await worker({ concurrency: 2 })
    const api = apiAs(tally.app, org)
    for (const id of ids) {
      // A claim counts an attempt: one attempt each means no export was claimed twice.
      expect(await finished(api, id)).toMatchObject({ status: 'succeeded', attempts: 1 })
    }
    expect(await metric('tally_exports_total', '{outcome="succeeded"}')).toBe(succeededBefore + 8)
    expect(await metric('tally_export_rows_total', '{format="csv"}')).toBe(rowsBefore + 8 * 12)
  })

  it('gives a running export back at shutdown, due at once and its attempt not counted', async () => {
    const org = await tally.newOrg()
    const id = await queued(org)
    let started: () => void = () => {}
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    // ClickHouse that does not answer: the query waits until it is aborted.
    const stuck: ExportQueries = {
      ...workers.queries,
      nextPart: (_scope, _after, _limit, signal) =>
        new Promise((_, reject) => {
          started()
          signal.addEventListener('abort', () => reject(signal.reason), { once: true })
        }),
    }
    const w = await worker({ queries: stuck })
    await running
    await w.stop()
    const got = (await apiAs(tally.app, org).get(`/v1/exports/${id}`)).data
    expect(got).toMatchObject({ status: 'queued', attempts: 0, last_error: null })
    expect(new Date(got.next_attempt_at).getTime()).toBeLessThanOrEqual(Date.now())
    // The next worker runs it.
    await worker()
    expect(await finished(apiAs(tally.app, org), id)).toMatchObject({ status: 'succeeded', attempts: 1 })
  })
})

describe('exactness', () => {
  it('fails an attempt whose window gained a row in a range already written, and the next one has it', async () => {
    const org = await tally.newOrg()
    const rows = eventsInWindow(org.organizationId, 12)
    await insertRows(tally, rows)
    const id = await queued(org)
    const job = await workers.jobs.claim(60_000, 1024 ** 4)
    expect(job?.id).toBe(id)
    if (!job) throw new Error('unreachable')
    // A late row lands before the last key of the first file once that file has been written.
    const [late] = eventsInWindow(org.organizationId, 1, {
      created_at: new Date(Date.parse(WINDOW.from) + 2),
    })
    let parts = 0
    const lateArrival: ExportQueries = {
      ...workers.queries,
      async nextPart(scope, after, limit, signal) {
        if (++parts === 2 && late) await insertRows(tally, [late])
        return workers.queries.nextPart(scope, after, limit, signal)
      },
    }
    const deps = {
      queries: lateArrival,
      blobs: tally.blobs,
      partRows: 5,
      stepTimeoutMs: 30_000,
      countBytes: async () => {},
      scratchDir: workers.scratch.dir,
    }
    const held = async () => true
    const attempt = runExport(deps, job, new AbortController().signal, held)
    await expect(attempt).rejects.toThrow(CountMismatch)
    await expect(attempt).rejects.toThrow('12 rows written, 13 counted after')
    const manifest = await runExport(deps, job, new AbortController().signal, held)
    expect(manifest).toMatchObject({ total_rows: 13, counted_rows: 13 })
    expect(manifest.files.map((f) => f.rows)).toEqual([5, 5, 3])
  })
})

describe('bounds', () => {
  it('refuses an export beyond the queued and running ones an organization may have, and creates nothing', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    for (let i = 0; i < 8; i++) await queued(org)
    const refused = await api.post('/v1/exports', { ...WINDOW, format: 'csv' })
    expect(refused).toMatchObject({ status: 429, data: null })
    expect(refused.error).toBe(
      'at most 8 exports of an organization may be queued or running at once (TALLY_EXPORT_MAX_PENDING); wait for some to finish',
    )
    expect((await api.get('/v1/exports?limit=100')).data).toHaveLength(8)
    // Another organization is not held back by this one's.
    expect(
      (await apiAs(tally.app, await tally.newOrg()).post('/v1/exports', { ...WINDOW, format: 'csv' })).status,
    ).toBe(201)
    // Finished exports do not count.
    await worker({ concurrency: 2 })
    await waitFor(async () => (await api.get('/v1/exports?status=succeeded&limit=100')).data.length === 8, {
      what: 'the eight exports to finish',
    })
    expect((await api.post('/v1/exports', { ...WINDOW, format: 'csv' })).status).toBe(201)
  })

  it('gives a backfilling schedule only as many windows at once as may be pending, the next as they finish', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const HOUR = 3_600_000
    const start = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR
    const created = await api.post('/v1/exports/schedules', {
      period: 'hourly',
      format: 'jsonl',
      start: new Date(start).toISOString(),
    })
    expect(created.status).toBe(201)
    expect(await workers.jobs.enqueueScheduled(120_000, 1_000, 8)).toBe(8)
    expect(await workers.jobs.enqueueScheduled(120_000, 1_000, 8)).toBe(0)
    const windows = async () =>
      ((await api.get('/v1/exports?limit=100')).data as { from: string }[]).map((e) => e.from).sort()
    expect(await windows()).toEqual(
      Array.from({ length: 8 }, (_, i) => new Date(start + i * HOUR).toISOString()),
    )
    await worker()
    await waitFor(async () => (await api.get('/v1/exports?status=succeeded&limit=100')).data.length >= 8, {
      what: 'the first eight windows to be exported',
    })
    await waitFor(async () => (await windows()).length > 8, { what: 'the next windows' })
    const after = await windows()
    expect(after).toEqual(
      Array.from({ length: after.length }, (_, i) => new Date(start + i * HOUR).toISOString()),
    )
  })
})
