import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exporterRole } from '../../services/exporter/role.ts'
import type { Config } from '../../services/shared/config.ts'
import { createLogger } from '../../services/shared/logger.ts'
import { freePort } from '../../services/shared/net.ts'
import { startRoles } from '../../services/shared/process/start.ts'
import { createShutdown, type Shutdown } from '../../services/shared/shutdown.ts'
import { apiAs } from '../support/api.ts'
import { engines, type TestOrg, type TestTally } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'
import { cleanUpProcesses, freshDataDir, spawnTally, stopTally } from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'
import { eventsInWindow, finished, insertRows, startExportTally, WINDOW } from './support.ts'

const s3 = engines().s3
const HOUR = 3_600_000

// The API alone; the exporters are started by the tests, in this process or as processes of their
// own, over the same Postgres, ClickHouse and S3.
let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({
    s3: true,
    roles: { api: true, ingest: true, dispatcher: true, exporter: false },
  })
})
afterAll(async () => {
  await cleanUpProcesses()
  await tally?.close()
})

/** An exporter role started as `services/exporter/main.ts` starts it: alone, without Kafka. */
async function startExporter(overrides: Partial<Config>): Promise<Shutdown> {
  const config: Config = { ...tally.config, KAFKA_BROKERS: undefined, ...overrides }
  const log = createLogger(config, 'tally-exporter-test')
  const shutdown = createShutdown(log, config.TALLY_SHUTDOWN_STEP_TIMEOUT)
  await startRoles(config, log, shutdown, { consumers: [], workers: [exporterRole] })
  return shutdown
}

async function queued(org: TestOrg): Promise<string> {
  const res = await apiAs(tally.app, org).post('/v1/exports', { ...WINDOW, format: 'parquet' })
  expect(res.error).toBeNull()
  return res.data.id
}

describe.skipIf(!s3)('the exporter role', () => {
  it('starts an export at once when it is queued, woken by NOTIFY, though its poll is an hour', async () => {
    const exporter = await startExporter({ TALLY_EXPORT_POLL_INTERVAL: HOUR })
    try {
      // Its first pass found nothing: it sleeps until woken, and the poll is an hour away.
      const passes = () => metric('tally_export_passes_total')
      const before = await waitFor(async () => ((await passes()) >= 1 ? passes() : null), {
        what: 'the first pass of the exporter',
      })
      const org = await tally.newOrg()
      await insertRows(tally, eventsInWindow(org.organizationId, 4))
      const id = await queued(org)
      expect(await finished(apiAs(tally.app, org), id)).toMatchObject({ status: 'succeeded', attempts: 1 })
      // Woken twice (the notification, the job's end), never by a poll of its own.
      expect(await passes()).toBeLessThanOrEqual(before + 2)
    } finally {
      await exporter.run('test finished')
    }
  })

  it('runs every export exactly once with two replicas claiming at once', async () => {
    const replicas = await Promise.all([
      startExporter({ TALLY_EXPORT_POLL_INTERVAL: HOUR, TALLY_EXPORT_CONCURRENCY: 2 }),
      startExporter({ TALLY_EXPORT_POLL_INTERVAL: HOUR, TALLY_EXPORT_CONCURRENCY: 2 }),
    ])
    try {
      const orgs = await Promise.all([tally.newOrg(), tally.newOrg(), tally.newOrg()])
      const ids: { org: TestOrg; id: string }[] = []
      for (const org of orgs) {
        await insertRows(tally, eventsInWindow(org.organizationId, 3))
        for (let i = 0; i < 5; i++) ids.push({ org, id: await queued(org) })
      }
      for (const { org, id } of ids) {
        // A claim counts an attempt: one attempt each means no export was claimed twice.
        expect(await finished(apiAs(tally.app, org), id)).toMatchObject({ status: 'succeeded', attempts: 1 })
      }
    } finally {
      await Promise.all(replicas.map((r) => r.run('test finished')))
    }
  })

  it('runs as a process of its own with a health port, and another takes over the job of one killed mid-way', async () => {
    const port = await freePort()
    const env = {
      DATABASE_URL: tally.config.DATABASE_URL ?? '',
      CLICKHOUSE_URL: engines().clickhouseUrl,
      CLICKHOUSE_DATABASE: tally.config.CLICKHOUSE_DATABASE,
      S3_ENDPOINT: s3?.endpoint ?? '',
      S3_BUCKET: s3?.bucket ?? '',
      S3_REGION: s3?.region ?? '',
      S3_ACCESS_KEY_ID: s3?.accessKeyId ?? '',
      S3_SECRET_ACCESS_KEY: s3?.secretAccessKey ?? '',
      TALLY_DATA_DIR: freshDataDir('tally-exporter-process-'),
      TALLY_METRICS_PORT: String(port),
      TALLY_EXPORT_PART_ROWS: '1',
      TALLY_EXPORT_LEASE: '2s',
      TALLY_EXPORT_POLL_INTERVAL: '1h',
      TALLY_LOG_LEVEL: 'warn',
    }
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`)
      return { status: res.status, text: await res.text() }
    }
    const first = spawnTally('services/exporter/main.ts', env)
    const ready = await waitFor(
      async () => {
        if (first.child.exitCode !== null)
          throw new Error(`exited ${first.child.exitCode}: ${first.output()}`)
        return (await get('/readyz').catch(() => null))?.status === 200 ? get('/readyz') : null
      },
      {
        what: () => `the exporter's /readyz; its output:\n${first.output()}`,
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    )
    expect(JSON.parse(ready.text)).toEqual({
      data: { ready: true, engines: { postgres: 'ok', clickhouse: 'ok', 'blobs (s3)': 'ok' } },
      error: null,
    })
    expect(await get('/livez')).toEqual({ status: 200, text: '{"data":{"ok":true},"error":null}' })
    expect((await get('/metrics')).text).toMatch(/^tally_export_jobs_running 0$/m)

    const org = await tally.newOrg()
    await insertRows(tally, eventsInWindow(org.organizationId, 40))
    const id = await queued(org)
    // One file of forty is stored: the job is under way when its process is killed.
    await waitFor(
      async () =>
        (await tally.sql`select 1 from export_bytes where organization_id = ${org.organizationId}`).length >
        0,
      { what: () => `the first file of the export; the output:\n${first.output()}` },
    )
    first.child.kill('SIGKILL')
    await first.exited
    const api = apiAs(tally.app, org)
    expect((await api.get(`/v1/exports/${id}`)).data).toMatchObject({ status: 'running', attempts: 1 })

    const second = spawnTally('services/exporter/main.ts', env)
    const done = await finished(api, id, 60_000)
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, last_error: null })
    expect(done.manifest).toMatchObject({ total_rows: 40, counted_rows: 40 })
    expect(done.manifest.files).toHaveLength(40)
    expect(await stopTally(second)).toBe(0)
  }, 120_000)
})
