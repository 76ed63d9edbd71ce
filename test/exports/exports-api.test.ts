import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import type { TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import {
  download,
  eventsInWindow,
  expectedRows,
  exportWindow,
  finished,
  insertRows,
  normalise,
  readParquet,
  startExportTally,
  WINDOW,
} from './support.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({ env: { TALLY_EXPORT_POLL_INTERVAL: '50ms' } })
})
afterAll(() => tally?.close())

const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()

describe('POST /v1/exports refuses what it cannot export exactly, naming the field', () => {
  const now = Date.now()
  it.each([
    [{ ...WINDOW, from: WINDOW.to }, 'body.to: must be after body.from'],
    [{ ...WINDOW, to: WINDOW.from }, 'body.to: must be after body.from'],
    [{ from: iso(now - HOUR), to: iso(now + HOUR) }, 'body.to: must be at least 2m in the past'],
    [{ from: iso(now - HOUR), to: iso(now - 60_000) }, 'body.to: must be at least 2m in the past'],
    [
      { from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' },
      'body.to: the window must be at most 31d long',
    ],
    [{ ...WINDOW, from: '1969-12-31T23:59:59Z' }, 'body.from: must not be before 1970-01-01T00:00:00Z'],
    [
      { ...WINDOW, from: '+275760-09-13T00:00:00Z' },
      'body.from: must be an ISO 8601 timestamp with an offset',
    ],
    [{ ...WINDOW, to: '99999-01-01T00:00:00Z' }, 'body.to: must be an ISO 8601 timestamp with an offset'],
    [{ ...WINDOW, from: '2026-10-01T00:00:00' }, 'body.from: must be an ISO 8601 timestamp with an offset'],
    [{ ...WINDOW, from: 1759276800000 }, 'body.from: must be an ISO 8601 timestamp with an offset'],
    [{ to: WINDOW.to }, 'body.from: must be an ISO 8601 timestamp with an offset'],
    [{ ...WINDOW, format: 'xlsx' }, 'body.format: must be one of parquet, csv, jsonl'],
    [{ ...WINDOW, format: 'csv\u0000' }, 'body.format: must not contain NUL (\\u0000)'],
    [{ ...WINDOW, fitler: {} }, 'body: Unrecognized key: "fitler"'],
    [
      { ...WINDOW, filter: { request_response_rmt: { colour: { equals: 'red' } } } },
      'body.filter.request_response_rmt.colour: unknown field',
    ],
    [
      { ...WINDOW, filter: { request_response_rmt: { model: { equals: 'a\u0000' } } } },
      'body.filter.request_response_rmt.model.equals: must not contain NUL (\\u0000)',
    ],
  ])('%j → 400 %s', async (body, message) => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const res = await api.post('/v1/exports', { format: 'parquet', ...body })
    expect(res.status).toBe(400)
    expect(res.data).toBeNull()
    expect(res.error).toContain(message)
    expect((await api.get('/v1/exports')).data).toEqual([])
  })

  it('takes a window right at the settle delay and at the longest length', async () => {
    const api = apiAs(tally.app, await tally.newOrg())
    const to = Date.now() - 3 * 60_000
    const res = await api.post('/v1/exports', { from: iso(to - 31 * 24 * HOUR), to: iso(to), format: 'csv' })
    expect(res.status).toBe(201)
    expect(res.data).toMatchObject({
      status: 'queued',
      format: 'csv',
      filter: {},
      schedule_id: null,
      manifest: null,
    })
  })
})

describe('requests logged through the intake', () => {
  it('are exported once each, a re-sent request id included, and only those of the window', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const event = (i: number, created: string) => ({
      request_id: randomUUID(),
      created_at: created,
      latency_ms: 100 + i,
      request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] },
      response: { id: `r-${i}`, choices: [{ message: { role: 'assistant', content: `answer ${i}` } }] },
      properties: { batch: 'intake' },
    })
    const inside = Array.from({ length: 6 }, (_, i) => event(i, `2026-10-01T0${i}:30:00.000Z`))
    const outside = [event(7, '2026-09-30T23:59:59.999Z'), event(8, WINDOW.to)]
    expect((await api.post('/v1/request/log', { events: [...inside, ...outside] })).status).toBe(201)
    // The same request sent again (Kafka or a client retrying): stored twice until merged, exported once.
    const resent = { ...(inside[2] as ReturnType<typeof event>), latency_ms: 999 }
    expect((await api.post('/v1/request/log', resent)).status).toBe(201)
    await waitFor(
      async () => (await api.post('/v1/request/query', { limit: 100 })).data.length === 8 || null,
      { what: 'the logged requests to be queryable' },
    )

    const done = await exportWindow(tally, org, { format: 'parquet' })
    expect(done.manifest).toMatchObject({ total_rows: 6, counted_rows: 6 })
    const rows = (await readParquet((await download(done.download.files[0].url)).body)).map(normalise)
    expect(rows.map((r) => r.request_id)).toEqual(inside.map((e) => e.request_id))
    expect(rows.find((r) => r.request_id === resent.request_id)?.latency).toBe(999)
    expect(rows).toEqual(await expectedRows(tally, org.organizationId))
  })
})

describe('GET /v1/exports and /v1/exports/{id}', () => {
  it('pages newest first, filters by status, and shows the window, attempts and outcome', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    await insertRows(tally, eventsInWindow(org.organizationId, 4))
    const ids: string[] = []
    for (const format of ['parquet', 'csv', 'jsonl']) {
      const res = await api.post('/v1/exports', { ...WINDOW, format })
      expect(res.status).toBe(201)
      ids.push(res.data.id)
    }
    for (const id of ids) expect((await finished(api, id)).status).toBe('succeeded')

    const page1 = await api.get('/v1/exports?limit=2')
    expect(page1.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]])
    const page2 = await api.get('/v1/exports?limit=2&offset=2')
    expect(page2.data.map((e: { id: string }) => e.id)).toEqual([ids[0]])
    expect((await api.get('/v1/exports?status=failed')).data).toEqual([])
    expect((await api.get('/v1/exports?status=succeeded')).data).toHaveLength(3)

    const one = (await api.get(`/v1/exports/${ids[0]}`)).data
    expect(one).toMatchObject({
      id: ids[0],
      status: 'succeeded',
      from: WINDOW.from,
      to: WINDOW.to,
      attempts: 1,
      last_error: null,
      next_attempt_at: null,
      manifest: { total_rows: 4, counted_rows: 4, format: 'parquet' },
    })
    expect(one.manifest.columns).toContain('request_body')
    expect(one.manifest.columns).not.toContain('ingested_at')
    // The list shows manifests but no links; GET of one export makes fresh links.
    expect(page2.data[0].download).toBeUndefined()
    expect(new Date(one.download.expires_at).getTime()).toBeGreaterThan(Date.now())
  })

  it.each([
    ['/v1/exports?limit=101', 'querystring.limit: must be between 1 and 100'],
    ['/v1/exports?offset=-1', 'querystring.offset: must be at least 0'],
    ['/v1/exports?status=done', 'querystring.status: must be one of queued, running, succeeded, failed'],
    ['/v1/exports?pages=2', 'querystring: Unrecognized key: "pages"'],
    ['/v1/exports?page=-1', 'querystring.page: must be at least 0'],
    ['/v1/exports/not-a-uuid', 'params.id: must be a UUID'],
    ['/v1/exports/%00', 'params.id: must not contain NUL'],
  ])('GET %s → 400 %s', async (url, message) => {
    const res = await apiAs(tally.app, await tally.newOrg()).get(url)
    expect(res.status).toBe(400)
    expect(res.error).toContain(message)
  })

  it("answers an unknown id and another organization's id alike: 404", async () => {
    const mine = apiAs(tally.app, await tally.newOrg())
    const theirs = apiAs(tally.app, await tally.newOrg())
    const created = await mine.post('/v1/exports', { ...WINDOW, format: 'jsonl' })
    for (const id of [created.data.id, randomUUID(), created.data.id.toUpperCase()]) {
      expect(await theirs.get(`/v1/exports/${id}`)).toMatchObject({ status: 404, error: 'Export not found' })
    }
    expect((await mine.get(`/v1/exports/${created.data.id.toUpperCase()}`)).status).toBe(200)
  })
})

describe('schedules', () => {
  it('catches up from its start with one export per ended hour, contiguous, each window exported once', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const start = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR
    // Rows in the first two hours (ended long ago) and one in the current hour (not yet exported).
    const rows = eventsInWindow(org.organizationId, 5).map((e, i) => ({
      ...e,
      created_at: new Date(start + (i < 3 ? 10 * 60_000 * (i + 1) : HOUR + 60_000 * i)),
    }))
    rows.push({ ...(rows[0] as (typeof rows)[0]), request_id: randomUUID(), created_at: new Date() })
    await insertRows(tally, rows)

    const created = await api.post('/v1/exports/schedules', {
      period: 'hourly',
      format: 'jsonl',
      start: iso(start),
    })
    expect(created.status).toBe(201)
    const scheduleId = created.data.id

    // Windows end at start + 1h, + 2h and + 3h; each is due once the settle delay (2m) has passed
    // after its end. The schedule's next_window_start says how far it has got.
    const settled = Math.floor((Date.now() - 2 * 60_000) / HOUR) * HOUR
    const { done, next } = await waitFor(
      async () => {
        const [s] = (await api.get('/v1/exports/schedules')).data as { next_window_start: string }[]
        const next = Date.parse(s?.next_window_start ?? '')
        const list = (await api.get('/v1/exports?limit=100')).data as {
          from: string
          to: string
          status: string
          schedule_id: string
          manifest: { total_rows: number } | null
        }[]
        const ready = next >= settled && list.length === (next - start) / HOUR
        return ready && list.every((e) => e.status === 'succeeded') ? { done: list, next } : null
      },
      { what: 'the ended windows to be exported', timeoutMs: 20_000 },
    )
    const expectedWindows = (next - start) / HOUR
    expect(expectedWindows).toBeGreaterThanOrEqual(2)
    const windows = done.map((e) => [e.from, e.to]).sort()
    expect(windows).toEqual(
      Array.from({ length: expectedWindows }, (_, i) => [iso(start + i * HOUR), iso(start + (i + 1) * HOUR)]),
    )
    expect(done.every((e) => e.schedule_id === scheduleId)).toBe(true)
    const totals = Object.fromEntries(done.map((e) => [e.from, e.manifest?.total_rows]))
    expect(totals[iso(start)]).toBe(3)
    expect(totals[iso(start + HOUR)]).toBe(2)

    expect(next).toBeLessThanOrEqual(Date.now() - 2 * 60_000)
    const schedules = (await api.get('/v1/exports/schedules')).data
    expect(schedules).toEqual([
      expect.objectContaining({ id: scheduleId, period: 'hourly', format: 'jsonl' }),
    ])
  })

  it('refuses starts off the period, in the future or too far back, and unknown keys', async () => {
    const api = apiAs(tally.app, await tally.newOrg())
    const hour = Math.floor(Date.now() / HOUR) * HOUR
    const yesterday = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR - 24 * HOUR
    const cases: [Record<string, unknown>, string][] = [
      [{ period: 'hourly', start: iso(hour - 60_000) }, 'body.start: must be the start of a UTC hour'],
      [{ period: 'daily', start: iso(yesterday + HOUR) }, 'body.start: must be the start of a UTC day'],
      [{ period: 'hourly', start: iso(hour + HOUR) }, 'body.start: must not be in the future'],
      [{ period: 'daily', start: '2020-01-01T00:00:00Z' }, 'body.start: must be within the last 90 days'],
      [{ period: 'weekly' }, 'body.period: must be one of hourly, daily'],
      [{ period: 'hourly', cron: '* * * * *' }, 'body: Unrecognized key: "cron"'],
    ]
    for (const [body, message] of cases) {
      const res = await api.post('/v1/exports/schedules', { format: 'parquet', ...body })
      expect(res.status, message).toBe(400)
      expect(res.error).toContain(message)
    }
    expect((await api.get('/v1/exports/schedules')).data).toEqual([])
  })

  it("deletes a schedule (its exports stay); another organization's schedule is a 404", async () => {
    const mine = apiAs(tally.app, await tally.newOrg())
    const theirs = apiAs(tally.app, await tally.newOrg())
    const created = await mine.post('/v1/exports/schedules', { period: 'daily', format: 'csv' })
    expect(created.data.next_window_start).toBe(iso(Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR))
    expect(await theirs.delete(`/v1/exports/schedules/${created.data.id}`)).toMatchObject({ status: 404 })
    expect((await theirs.get('/v1/exports/schedules')).data).toEqual([])
    expect((await mine.get('/v1/exports/schedules')).data).toHaveLength(1)
    expect(await mine.delete(`/v1/exports/schedules/${created.data.id}`)).toMatchObject({
      status: 200,
      data: null,
    })
    expect(await mine.delete(`/v1/exports/schedules/${created.data.id}`)).toMatchObject({ status: 404 })
    expect((await mine.get('/v1/exports/schedules')).data).toEqual([])
  })
})
