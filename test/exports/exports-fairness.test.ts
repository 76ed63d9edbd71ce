import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import type { TestOrg, TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { eventsInWindow, exportWorkers, finished, insertRows, startExportTally, WINDOW } from './support.ts'

// No exporter in this Tally: each test starts the workers it is about, over the same engines.
let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({
    roles: { api: true, ingest: true, dispatcher: true, exporter: false },
    env: { TALLY_EXPORT_MAX_PENDING: '10', TALLY_EXPORT_MAX_SCHEDULES: '3' },
  })
})
afterAll(() => tally?.close())

const workers = exportWorkers(() => tally)
// Each test's workers stop with it: a later test's exports are run only by the workers it starts.
const worker: typeof workers.start = (overrides = {}) => workers.start({ maxPending: 10, ...overrides })

async function queued(org: TestOrg, format = 'jsonl'): Promise<string> {
  const res = await apiAs(tally.app, org).post('/v1/exports', { ...WINDOW, format })
  expect(res.error).toBeNull()
  return res.data.id
}

const HOUR = 3_600_000

describe('organizations take turns', () => {
  it("runs another organization's single export after at most one of a busy organization's", async () => {
    const busy = await tally.newOrg()
    const quiet = await tally.newOrg()
    await insertRows(tally, eventsInWindow(busy.organizationId, 6))
    await insertRows(tally, eventsInWindow(quiet.organizationId, 6))
    const busyIds: string[] = []
    for (let i = 0; i < 8; i++) busyIds.push(await queued(busy))
    const quietId = await queued(quiet)
    await worker()
    const quietDone = await finished(apiAs(tally.app, quiet), quietId)
    const busyDone = []
    for (const id of busyIds) busyDone.push(await finished(apiAs(tally.app, busy), id))
    expect([quietDone, ...busyDone].every((e) => e.status === 'succeeded')).toBe(true)
    // One slot: exports finish one after another. FIFO would finish the quiet one ninth.
    const before = busyDone.filter((e) => Date.parse(e.finished_at) < Date.parse(quietDone.finished_at))
    expect(before.length).toBeLessThanOrEqual(1)
    // Within an organization, oldest first.
    const order = [...busyDone].sort((a, b) => Date.parse(a.finished_at) - Date.parse(b.finished_at))
    expect(order.map((e) => e.id)).toEqual(busyIds)
  })
  it('gives exporters claiming at the same moment one organization each', async () => {
    const orgs = await Promise.all(Array.from({ length: 6 }, () => tally.newOrg()))
    for (const org of orgs) for (let i = 0; i < 3; i++) await queued(org)
    const claims = await Promise.all(orgs.map(() => workers.jobs.claim(60_000, 1024 ** 4)))
    const claimedOrgs = claims.map((job) => job?.organizationId)
    expect(new Set(claimedOrgs).size).toBe(orgs.length)
    expect(claimedOrgs.sort()).toEqual(orgs.map((o) => o.organizationId).sort())
    // Handed back, so that no later test's worker meets them.
    for (const job of claims) if (job) await workers.jobs.fail(job, 'claimed by the test')
  })
})

describe('bytes per hour', () => {
  it('holds back an organization past its limit, the reason and the time shown, while others run', async () => {
    const heavy = await tally.newOrg()
    const other = await tally.newOrg()
    await insertRows(tally, eventsInWindow(heavy.organizationId, 6))
    await insertRows(tally, eventsInWindow(other.organizationId, 6))
    const first = await queued(heavy)
    const second = await queued(heavy)
    const others = await queued(other)
    // Any file reaches the limit: the heavy organization's first export runs, then it waits.
    await worker({ maxBytesPerHour: 1 })
    const api = apiAs(tally.app, heavy)
    expect(await finished(api, first)).toMatchObject({ status: 'succeeded', attempts: 1 })
    expect(await finished(apiAs(tally.app, other), others)).toMatchObject({ status: 'succeeded' })
    const held = await waitFor(
      async () => {
        const got = (await api.get(`/v1/exports/${second}`)).data
        return got.waiting_reason ? got : null
      },
      { what: 'the second export to be held back' },
    )
    expect(held).toMatchObject({ status: 'queued', attempts: 0, last_error: null })
    expect(held.waiting_reason).toMatch(
      /^its organization's export files of the last hour hold \d+ bytes, at least its limit of 1 bytes \(TALLY_EXPORT_MAX_BYTES_PER_HOUR\); it runs once they fall below it$/,
    )
    // Due an hour after the first export's files were stored, not before.
    const firstDone = (await api.get(`/v1/exports/${first}`)).data
    const due = Date.parse(held.next_attempt_at)
    expect(due).toBeGreaterThanOrEqual(Date.parse(firstDone.started_at) + HOUR)
    expect(due).toBeLessThanOrEqual(Date.parse(firstDone.finished_at) + HOUR)
  })

  it('runs the held-back export once the files of the last hour fall below the limit', async () => {
    const org = await tally.newOrg()
    await insertRows(tally, eventsInWindow(org.organizationId, 6))
    const first = await queued(org)
    const second = await queued(org)
    await worker({ maxBytesPerHour: 1 })
    const api = apiAs(tally.app, org)
    await finished(api, first)
    await waitFor(async () => (await api.get(`/v1/exports/${second}`)).data.waiting_reason, {
      what: 'the second export to be held back',
    })
    // An hour passes for this organization's files, and its export comes due.
    await tally.sql`update export_bytes set written_at = written_at - interval '61 minutes'
                    where organization_id = ${org.organizationId}`
    await tally.sql`update exports set next_attempt_at = now() where id = ${second}`
    expect(await finished(api, second)).toMatchObject({ status: 'succeeded', attempts: 1 })
  })

  it("holds back a dead exporter's export of an organization past its limit rather than pass it over", async () => {
    const org = await tally.newOrg()
    const id = await queued(org)
    // A process claims it and dies at once; the organization's files already reach the limit.
    const dead = await workers.jobs.claim(1, 1024 ** 4)
    expect(dead?.id).toBe(id)
    await workers.jobs.recordBytes(org.organizationId, 10)
    await worker({ maxBytesPerHour: 10 })
    const api = apiAs(tally.app, org)
    const held = await waitFor(
      async () => {
        const got = (await api.get(`/v1/exports/${id}`)).data
        return got.waiting_reason ? got : null
      },
      { what: "the dead exporter's export to be held back" },
    )
    expect(held).toMatchObject({ status: 'queued', attempts: 1 })
    expect(Date.parse(held.next_attempt_at)).toBeGreaterThan(Date.now())
    if (!dead) throw new Error('unreachable')
    expect(await workers.jobs.renew(dead, 1_000)).toBe(false)
  })
})

describe('an organization cannot flood the queue', () => {
  it('refuses exports past the pending limit even when they arrive together from several keys', async () => {
    const org = await tally.newOrg()
    const keys = [org, await newKey(org), await newKey(org)]
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        apiAs(tally.app, keys[i % keys.length] as TestOrg).post('/v1/exports', { ...WINDOW, format: 'csv' }),
      ),
    )
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10)
    const refused = answers.filter((a) => a.status === 429)
    expect(refused).toHaveLength(14)
    expect(refused[0]?.error).toBe(
      'at most 10 exports of an organization may be queued or running at once (TALLY_EXPORT_MAX_PENDING); wait for some to finish',
    )
  })

  it("shares the pending limit among the organization's schedules and its own exports", async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    for (let i = 0; i < 2; i++) await queued(org)
    const start = new Date(Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR).toISOString()
    for (let i = 0; i < 3; i++) {
      const created = await api.post('/v1/exports/schedules', { period: 'hourly', format: 'jsonl', start })
      expect(created.status).toBe(201)
    }
    // Three schedules with 46 ended windows each: eight more fit beside the two exports.
    expect(await workers.jobs.enqueueScheduled(120_000, 1_000, 10)).toBe(8)
    expect(await workers.jobs.enqueueScheduled(120_000, 1_000, 10)).toBe(0)
    const pending = (await api.get('/v1/exports?limit=100')).data as { schedule_id: string | null }[]
    expect(pending).toHaveLength(10)
    expect(pending.filter((e) => e.schedule_id !== null)).toHaveLength(8)
  })

  it("queues a schedule's windows though many organizations with due schedules have full queues", async () => {
    // Sixty organizations, first by id, with a backfilling schedule and as many exports running
    // as they may have.
    const start = new Date(Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR)
    await tally.sql`
      with full_orgs as (
        insert into organizations (id, name)
        select ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 'full-' || g
        from generate_series(1, 60) g returning id),
      scheduled as (
        insert into export_schedules (organization_id, period, format, filter, next_window_start)
        select id, 'hourly', 'csv', '{}', ${start} from full_orgs)
      insert into exports (organization_id, window_from, window_to, filter, format, status, lease_token,
                           lease_expires_at, attempts)
      select id, '2026-10-01', '2026-10-02', '{}', 'csv', 'running', gen_random_uuid(), now() + interval '1 day', 1
      from full_orgs, generate_series(1, 10)`
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    expect(
      (await api.post('/v1/exports/schedules', { period: 'hourly', format: 'jsonl', start })).status,
    ).toBe(201)
    expect(await workers.jobs.enqueueScheduled(120_000, 1_000, 10)).toBe(10)
    expect((await api.get('/v1/exports?limit=100')).data).toHaveLength(10)
  })

  it('refuses schedules past the limit, together from several keys too, and takes one after a delete', async () => {
    const org = await tally.newOrg()
    const keys = [org, await newKey(org), await newKey(org)]
    const body = { period: 'daily', format: 'parquet' }
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        apiAs(tally.app, keys[i % keys.length] as TestOrg).post('/v1/exports/schedules', body),
      ),
    )
    const created = answers.filter((a) => a.status === 201)
    expect(created).toHaveLength(3)
    const refused = answers.filter((a) => a.status === 409)
    expect(refused).toHaveLength(9)
    expect(refused[0]).toMatchObject({
      data: null,
      error:
        'This organization already holds 3 export schedules, the most it may (TALLY_EXPORT_MAX_SCHEDULES); delete one first',
    })
    const api = apiAs(tally.app, org)
    expect((await api.get('/v1/exports/schedules')).data).toHaveLength(3)
    // Another organization has its own three.
    expect((await apiAs(tally.app, await tally.newOrg()).post('/v1/exports/schedules', body)).status).toBe(
      201,
    )
    expect((await api.delete(`/v1/exports/schedules/${created[0]?.data.id}`)).status).toBe(200)
    expect((await api.post('/v1/exports/schedules', body)).status).toBe(201)
    expect((await api.post('/v1/exports/schedules', body)).status).toBe(409)
  })
})

/** Another API key of the organization. */
async function newKey(org: TestOrg): Promise<TestOrg> {
  const res = await apiAs(tally.app, org).post('/v1/api-keys', { name: 'another', role: 'admin' })
  expect(res.status).toBe(201)
  const apiKey = res.data.api_key as string
  return { organizationId: org.organizationId, apiKey, headers: { authorization: `Bearer ${apiKey}` } }
}
