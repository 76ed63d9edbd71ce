import { randomUUID } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ExportWorkerOptions } from '../../services/exporter/worker.ts'
import type { BlobStore } from '../../services/shared/blobs/blob-store.ts'
import { apiAs, type Caller } from '../support/api.ts'
import type { TestOrg, TestTally } from '../support/harness.ts'
import { cleanUpProcesses, spawnTally, waitForOutput } from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'
import {
  eventsInWindow,
  exportWindow,
  exportWorkers,
  insertRows,
  startExportTally,
  WINDOW,
} from './support.ts'

const ADMIN_KEY = `tally-admin-${randomUUID()}`
const admin: Caller = { headers: { authorization: `Bearer ${ADMIN_KEY}` } }
/** How long a deletion waits for the organization's exports to stop. */
const LEASE = '3s'

// This Tally runs no exporter of its own: each test starts the workers it is about.
let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({
    roles: { api: true, ingest: true, dispatcher: true, exporter: false },
    env: { TALLY_ADMIN_API_KEY: ADMIN_KEY, TALLY_EXPORT_LEASE: LEASE },
  })
})
afterAll(async () => {
  await cleanUpProcesses()
  await tally?.close()
})
const workers = exportWorkers(() => tally)
const worker = (overrides: Partial<ExportWorkerOptions> = {}) =>
  workers.start({ retrySchedule: [50], ...overrides })

/** An organization made through the admin API, as whoever runs Tally makes one. */
async function organization(): Promise<TestOrg> {
  const res = await apiAs(tally.app, admin).post('/admin/v1/organizations', {
    name: `doomed-${randomUUID()}`,
  })
  expect(res.status, res.error ?? '').toBe(201)
  const headers = { authorization: `Bearer ${res.data.api_key}` }
  return { organizationId: res.data.id, apiKey: res.data.api_key, headers }
}

async function queued(org: TestOrg): Promise<string> {
  const res = await apiAs(tally.app, org).post('/v1/exports', { ...WINDOW, format: 'jsonl' })
  expect(res.status, res.error ?? '').toBe(201)
  return res.data.id
}

const deleteOrganization = (org: TestOrg) =>
  apiAs(tally.app, admin).delete(`/admin/v1/organizations/${org.organizationId}`)

/** The organization's folder of export files in the filesystem store. */
const exportFiles = (org: TestOrg) =>
  resolve(tally.config.TALLY_DATA_DIR, 'blobs', 'objects', 'exports', org.organizationId)

/** Everything of the organization that a deletion must leave nowhere. */
async function remains(org: TestOrg) {
  const id = org.organizationId
  const [pg] = await tally.sql<{ organizations: number; exports: number; keys: number }[]>`
    select (select count(*) from organizations where id = ${id})::int as organizations,
           (select count(*) from exports where organization_id = ${id})::int as exports,
           (select count(*) from api_keys where organization_id = ${id})::int as keys`
  const rs = await tally.clickhouse.query({
    query: 'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID}',
    query_params: { org: id },
    format: 'JSONEachRow',
  })
  return {
    ...pg,
    requestRows: Number((await rs.json<{ n: number }>())[0]?.n),
    exportFiles: existsSync(exportFiles(org)),
  }
}
const NOTHING = { organizations: 0, exports: 0, keys: 0, requestRows: 0, exportFiles: false }

/**
 * The store, except that the upload of the `n`th file stalls (a slow object store) until
 * `release()`, or until the job's signal aborts it, as a real upload is.
 */
function stallingStore(n: number) {
  let uploads = 0
  const released = Promise.withResolvers<void>()
  const reached = Promise.withResolvers<void>()
  const blobs: BlobStore = {
    ...tally.blobs,
    async putFile(key, path, contentType, signal) {
      if (++uploads === n) {
        reached.resolve()
        await new Promise<void>((done, fail) => {
          void released.promise.then(done)
          signal?.addEventListener('abort', () => fail(signal.reason), { once: true })
        })
      }
      return tally.blobs.putFile(key, path, contentType, signal)
    },
  }
  return { blobs, reached: reached.promise, release: released.resolve }
}

/** An organization whose export has stored its first file and waits on the upload of its second. */
async function exportStalledAtSecondFile() {
  const org = await organization()
  await insertRows(tally, eventsInWindow(org.organizationId, 12))
  const id = await queued(org)
  const store = stallingStore(2)
  await worker({ blobs: store.blobs })
  await store.reached
  const partsFolders = () =>
    readdirSync(workers.scratch.dir).filter((name) => name.startsWith(`export-${id}-`))
  return { org, id, release: store.release, partsFolders }
}

describe('deleting an organization while its exports run', () => {
  it('stops the export in the middle of an upload, answers 200 and leaves nothing of it, files included', async () => {
    const { org, id, release, partsFolders } = await exportStalledAtSecondFile()
    // The first file is in the store, the second waits in this process's scratch folder.
    expect(readdirSync(join(exportFiles(org), id))).toEqual(['part-00001.jsonl'])
    expect(partsFolders()).toHaveLength(1)

    const res = await deleteOrganization(org)
    // Had the export gone on, its upload would land now.
    release()
    expect(res).toEqual({ status: 200, data: null, error: null })
    expect(await remains(org)).toEqual(NOTHING)

    // The worker (one job at a time) is free again: the stalled job has ended, and wrote nothing more.
    const other = await tally.newOrg()
    await insertRows(tally, eventsInWindow(other.organizationId, 3))
    await exportWindow(tally, other, { format: 'jsonl' })
    expect(await remains(org)).toEqual(NOTHING)
    expect(partsFolders()).toEqual([])
    expect(
      (await tally.sql`select 1 from deleted_organizations where organization_id = ${org.organizationId}`)
        .length,
    ).toBe(1)
  })

  it('two deletions at once while an export uploads: each answers 200 or 404, and nothing remains', async () => {
    const { org, release, partsFolders } = await exportStalledAtSecondFile()
    const answers = await Promise.all([deleteOrganization(org), deleteOrganization(org)])
    release()
    expect(answers.map((a) => a.status).sort()).toSatisfy(
      (statuses: number[]) => statuses[0] === 200 && [200, 404].includes(statuses[1] as number),
    )
    expect(await remains(org)).toEqual(NOTHING)
    expect(partsFolders()).toEqual([])
  })

  it('answers 503 while a dead worker still holds the lease of an export, and finishes once the lease ended', async () => {
    const org = await organization()
    await insertRows(tally, eventsInWindow(org.organizationId, 3))
    const id = await queued(org)
    const hook = await apiAs(tally.app, org).post('/v1/webhooks', {
      destination: 'https://receiver.invalid/hook',
    })
    expect(hook.status, hook.error ?? '').toBe(201)
    // A process claims it for longer than a deletion waits, and dies.
    const dead = await workers.jobs.claim(6_000, 1024 ** 4)
    expect(dead?.id).toBe(id)

    const first = await deleteOrganization(org)
    expect(first).toEqual({
      status: 503,
      data: null,
      error: "The organization's running exports have not stopped yet; send the DELETE again",
    })
    // Its keys are gone already, and its webhooks (nothing more is sent for it while it waits).
    expect((await apiAs(tally.app, org).get('/v1/exports')).status).toBe(401)
    expect(
      await tally.sql`select 1 from webhooks where organization_id = ${org.organizationId}`,
    ).toHaveLength(0)
    const done = await waitFor(
      async () => {
        const again = await deleteOrganization(org)
        if (again.status === 503) return null
        return again
      },
      { what: 'the deletion once the dead lease ended', timeoutMs: 20_000 },
    )
    expect(done).toEqual({ status: 200, data: null, error: null })
    expect(await remains(org)).toEqual(NOTHING)
  })

  it('a queued export of an organization being deleted is not run: it writes no file', async () => {
    const org = await organization()
    await insertRows(tally, eventsInWindow(org.organizationId, 3))
    const id = await queued(org)
    // The deletion has begun (keys revoked, recorded) but not finished, as after a failed step.
    await tally.sql`insert into deleted_organizations (organization_id) values (${org.organizationId})`
    await worker()
    const row = await waitFor(
      async () => {
        const [r] = await tally.sql`select status, last_error from exports where id = ${id}`
        return r?.status === 'failed' ? r : null
      },
      { what: 'the export given up' },
    )
    expect(row).toEqual({ status: 'failed', last_error: 'the organization was deleted' })
    expect(existsSync(exportFiles(org))).toBe(false)
    expect((await deleteOrganization(org)).status).toBe(200)
    expect(await remains(org)).toEqual(NOTHING)
  })

  it('the schedules of an organization being deleted queue no export while the deletion waits', async () => {
    const org = await organization()
    const HOUR = 3_600_000
    const res = await apiAs(tally.app, org).post('/v1/exports/schedules', {
      period: 'hourly',
      format: 'jsonl',
      start: new Date(Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR).toISOString(),
    })
    expect(res.status, res.error ?? '').toBe(201)
    // The deletion has begun (keys revoked, recorded) but not finished, as after a failed step.
    await tally.sql`insert into deleted_organizations (organization_id) values (${org.organizationId})`
    expect(await workers.jobs.enqueueScheduled(120_000, 1_000, 20)).toBe(0)
    expect(await tally.sql`select 1 from exports where organization_id = ${org.organizationId}`).toHaveLength(
      0,
    )
    expect((await deleteOrganization(org)).status).toBe(200)
    expect(await remains(org)).toEqual(NOTHING)
  })
})

describe('an exporter process killed with SIGKILL in the middle of an export', () => {
  it('leaves its part files in its scratch folder under TALLY_DATA_DIR, and deleting the organization removes them', async () => {
    const org = await organization()
    await insertRows(tally, eventsInWindow(org.organizationId, 400))
    const id = await queued(org)
    // An exporter of its own (it needs no Kafka) on this Tally's data directory and engines.
    const exporter = spawnTally('services/exporter/main.ts', {
      TALLY_DATA_DIR: tally.config.TALLY_DATA_DIR,
      DATABASE_URL: tally.config.DATABASE_URL ?? '',
      CLICKHOUSE_URL: tally.config.CLICKHOUSE_URL ?? '',
      CLICKHOUSE_DATABASE: tally.config.CLICKHOUSE_DATABASE,
      // One row per file: the export runs long enough to be killed in the middle.
      TALLY_EXPORT_PART_ROWS: '1',
      TALLY_EXPORT_LEASE: '1s',
      TALLY_EXPORT_POLL_INTERVAL: '50ms',
    })
    await waitForOutput(exporter, (out) => out.includes('process_ready'), {
      what: 'process_ready',
      timeoutMs: 60_000,
    })
    // Its folder for the export's parts, in the process's scratch folder.
    const root = resolve(tally.config.TALLY_DATA_DIR, 'tmp')
    const leftovers = () =>
      readdirSync(root, { recursive: true, withFileTypes: true }).filter(
        (e) => e.isDirectory() && e.name.startsWith(`export-${id}-`),
      )
    await waitFor(() => existsSync(join(exportFiles(org), id, 'part-00002.jsonl')), {
      what: 'the export under way',
      intervalMs: 5,
    })
    exporter.child.kill('SIGKILL')
    await exporter.exited
    expect(leftovers()).toHaveLength(1)

    const done = await waitFor(
      async () => {
        const res = await deleteOrganization(org)
        return res.status === 503 ? null : res
      },
      { what: 'the deletion once the killed process lease ended', timeoutMs: 20_000 },
    )
    expect(done).toEqual({ status: 200, data: null, error: null })
    expect(leftovers()).toEqual([])
    expect(await remains(org)).toEqual(NOTHING)
    // This process's own scratch folder is live: it is still there.
    expect(existsSync(workers.scratch.dir)).toBe(true)
  }, 90_000)
})
