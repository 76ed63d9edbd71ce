import { createHash } from 'node:crypto'
import { parquetReadObjects } from 'hyparquet'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { createExportJobs, type ExportJobs } from '../../services/exporter/jobs.ts'
import { createExportQueries, type ExportQueries } from '../../services/exporter/query.ts'
import { type ExportWorkerOptions, startExportWorker } from '../../services/exporter/worker.ts'
import { toRow } from '../../services/shared/clickhouse/request-table.ts'
import {
  createDeletedOrganizations,
  type DeletedOrganizations,
} from '../../services/shared/deleted-organizations.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { createLogger } from '../../services/shared/logger.ts'
import { openScratch, type Scratch } from '../../services/shared/scratch.ts'
import { clickHouseTime } from '../../services/shared/timestamp.ts'
import { apiAs } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import {
  engines,
  startTestTally,
  type TestOrg,
  type TestTally,
  type TestTallyOptions,
} from '../support/harness.ts'
import { createScratchDatabase } from '../support/scratch-database.ts'
import { waitFor } from '../support/wait.ts'

/**
 * A Tally on a database of this test file's own. Every exporter claims due exports from the whole
 * table, as it must in production; other suites' Tallys on the shared test database write to
 * other object stores, so their exporters must not see our exports.
 */
export async function startExportTally(options: TestTallyOptions = {}): Promise<TestTally> {
  const db = await createScratchDatabase(engines().postgresUrl, 'tally_exports')
  const tally = await startTestTally({ ...options, env: { ...options.env, DATABASE_URL: db.url } })
  return {
    ...tally,
    async close() {
      await tally.close()
      await db.drop()
    },
  }
}

export interface ExportWorkers {
  jobs: ExportJobs
  queries: ExportQueries
  /** The workers' scratch folder (one, as for one further exporter process). */
  scratch: Scratch
  deletions: DeletedOrganizations
  /**
   * Starts a worker, stopped when the test ends: small parts, short leases, a quick poll, no
   * byte limit, unless told otherwise.
   */
  start(overrides?: Partial<ExportWorkerOptions>): Promise<{ stop(): Promise<void> }>
}

/**
 * For a file whose Tally runs no exporter of its own: each test starts the workers it is about,
 * as exporter processes would, over the same Postgres, ClickHouse and store. Call after the hook
 * that starts the Tally.
 */
export function exportWorkers(tally: () => TestTally): ExportWorkers {
  const running: { stop(): Promise<void> }[] = []
  // Filled in before the first test.
  const workers = {} as ExportWorkers
  workers.start = async (overrides = {}) => {
    const t = tally()
    const w = await startExportWorker({
      sql: t.sql,
      jobs: workers.jobs,
      queries: workers.queries,
      blobs: t.blobs,
      log: createLogger(t.config, 'export-worker'),
      concurrency: 1,
      partRows: 5,
      stepTimeoutMs: 30_000,
      leaseMs: 1_000,
      pollMs: 25,
      settleMs: 120_000,
      maxPending: 20,
      maxBytesPerHour: 1024 ** 4,
      retrySchedule: [50, 3_000],
      scratchDir: workers.scratch.dir,
      deletions: workers.deletions,
      ...overrides,
    })
    running.push(w)
    return w
  }
  beforeAll(async () => {
    const t = tally()
    const log = createLogger(t.config, 'export-worker')
    workers.jobs = createExportJobs(t.sql)
    workers.queries = createExportQueries(t.clickhouse, { timeoutMs: 30_000, maxThreads: 1 })
    workers.scratch = await openScratch(t.config.TALLY_DATA_DIR, log)
    workers.deletions = await createDeletedOrganizations(t.sql, log)
  })
  // Each test's workers stop with it: a later test's exports are run only by the workers it starts.
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()))
  })
  afterAll(async () => {
    await workers.deletions?.close()
    await workers.scratch?.close()
  })
  return workers
}

/** A window well in the past (the settle delay never matters) and within the intake's range. */
export const WINDOW = { from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z' }
const FROM_MS = Date.parse(WINDOW.from)

/** `n` events of the organization spread over the window, with bodies, properties and a quote or two. */
export function eventsInWindow(organizationId: string, n: number, extra: Partial<RequestEvent> = {}) {
  return Array.from({ length: n }, (_, i) => {
    const created = new Date(FROM_MS + 1 + i * 60_000)
    return sampleEvent({
      organization_id: organizationId,
      created_at: created,
      completed_at: new Date(created.getTime() + 500 + i),
      latency_ms: 500 + i,
      time_to_first_token_ms: i % 3 === 0 ? null : 100 + i,
      model: i % 2 === 0 ? 'gpt-4o-mini' : 'claude-3-5-haiku',
      status: i % 5 === 0 ? 500 : 200,
      prompt_tokens: i,
      cost_usd: i / 1000,
      cached: i % 4 === 0,
      user_id: `user-${i % 3}`,
      properties: { env: i % 2 === 0 ? 'prod' : 'dev', note: `say "hi",\nrow ${i}` },
      request_body: JSON.stringify({
        messages: [{ role: 'user', content: `question ${i}, "quoted"\nline` }],
      }),
      response_body: i % 7 === 0 ? '' : JSON.stringify({ answer: `answer ${i}`, emoji: 'é✓' }),
      ...extra,
    })
  })
}

/** Writes the events into the test Tally's table, as the ingest consumer does. */
export async function insertRows(t: TestTally, events: RequestEvent[]): Promise<void> {
  await t.clickhouse.insert({
    table: 'request_response_rmt',
    values: events.map(toRow),
    format: 'JSONEachRow',
  })
}

/**
 * What an export's rows should be: the window's rows as ClickHouse holds them, normalised, for an
 * organization that has no scores nor properties set after the fact (empty score maps).
 */
export async function expectedRows(
  t: TestTally,
  organizationId: string,
  window: { from: string; to: string } = WINDOW,
): Promise<Record<string, unknown>[]> {
  const rs = await t.clickhouse.query({
    query: `SELECT * EXCEPT ingested_at FROM request_response_rmt FINAL
            WHERE organization_id = {org:UUID}
              AND request_created_at >= {from:DateTime64(3, 'UTC')} AND request_created_at < {to:DateTime64(3, 'UTC')}
            ORDER BY request_created_at, request_id`,
    query_params: {
      org: organizationId,
      from: clickHouseTime(new Date(window.from)),
      to: clickHouseTime(new Date(window.to)),
    },
    format: 'JSONEachRow',
  })
  return (await rs.json<Record<string, unknown>>())
    .map(normalise)
    .map((row) => ({ ...row, scores: {}, score_categories: {} }))
}

/** One row in one comparable form, whatever format it came from. */
export function normalise(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    if (value instanceof Date) out[key] = value.toISOString()
    else if (typeof value === 'bigint') out[key] = Number(value)
    else if (key.endsWith('_created_at') && typeof value === 'string')
      out[key] = new Date(value).toISOString()
    else out[key] = value
  }
  return out
}

export async function download(url: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(url)
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: Buffer.from(await res.arrayBuffer()),
  }
}

export async function readParquet(body: Buffer): Promise<Record<string, unknown>[]> {
  const file = new Uint8Array(body).buffer
  return (await parquetReadObjects({ file })) as Record<string, unknown>[]
}

export const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex')

type Api = ReturnType<typeof apiAs>

/** Polls an export until it has finished (succeeded or failed) and returns it as GET shows it. */
export async function finished(api: Api, id: string, timeoutMs = 20_000) {
  return waitFor(
    async () => {
      const got = await api.get(`/v1/exports/${id}`)
      expect(got.status).toBe(200)
      return got.data.status === 'succeeded' || got.data.status === 'failed' ? got.data : null
    },
    { what: `export ${id} to finish`, timeoutMs },
  )
}

/** Creates an export and waits for it to succeed. */
export async function exportWindow(t: TestTally, org: TestOrg, body: Record<string, unknown>) {
  const api = apiAs(t.app, org)
  const created = await api.post('/v1/exports', { ...WINDOW, ...body })
  expect(created.error).toBeNull()
  expect(created.status).toBe(201)
  const done = await finished(api, created.data.id)
  expect(done.last_error).toBeNull()
  expect(done.status).toBe('succeeded')
  return done
}
