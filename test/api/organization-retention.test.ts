import { randomUUID } from 'node:crypto'
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOrganizationRepo } from '../../services/api/admin/repo.ts'
import { SINGLE_NODE } from '../../services/shared/clickhouse/cluster-ddl.ts'
import { REQUEST_TABLE, toRow } from '../../services/shared/clickhouse/request-table.ts'
import { retentionKeeper } from '../../services/shared/clickhouse/retention.ts'
import { apiAs, type Caller, callApi } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { secondApi } from '../support/second-api.ts'
import { waitFor } from '../support/wait.ts'

const ADMIN_KEY = `tally-admin-${randomUUID()}`
const admin: Caller = { headers: { authorization: `Bearer ${ADMIN_KEY}` } }
const DAY = 86_400_000
/** The ClickHouse migration lock (services/shared/migrate.ts), which retention changes take too. */
const CLICKHOUSE_MIGRATION_LOCK = 7_461_680

let tally: TestTally
let adminApi: ReturnType<typeof apiAs>
const created: string[] = []
beforeAll(async () => {
  tally = await startTestTally({ env: { TALLY_ADMIN_API_KEY: ADMIN_KEY } })
  adminApi = apiAs(tally.app, admin)
})
afterAll(async () => {
  // Other test files' starts read every organization's own days: leave none behind.
  for (const id of created) await adminApi.patch(`/admin/v1/organizations/${id}`, { retention_days: null })
  await tally?.close()
})

async function createOrganization() {
  const res = await adminApi.post('/admin/v1/organizations', {
    name: `retention-${randomUUID().slice(0, 8)}`,
  })
  expect(res.status, res.error ?? '').toBe(201)
  created.push(res.data.id)
  return res.data as { id: string; retention_days: number | null; api_key: string }
}

/** The TTL ClickHouse reports for the requests' table of this Tally's database. */
async function requestTtl(): Promise<string> {
  const rs = await tally.clickhouse.query({
    query:
      "SELECT extract(engine_full, 'TTL (.+?)(?: SETTINGS|$)') AS ttl FROM system.tables WHERE database = currentDatabase() AND name = {t:String}",
    query_params: { t: REQUEST_TABLE },
    format: 'JSONEachRow',
  })
  return ((await rs.json<{ ttl: string }>())[0] as { ttl: string }).ttl
}

const retentionOf = async (id: string) =>
  (
    await tally.sql<
      { retention_days: number | null }[]
    >`select retention_days from organizations where id = ${id}`
  )[0]?.retention_days

describe("an organization's own retention (PATCH /admin/v1/organizations/{id})", () => {
  it('is null when created, set and shown, applied to ClickHouse at once, and unset again', async () => {
    const org = await createOrganization()
    expect(org.retention_days).toBeNull()

    const set = await adminApi.patch(`/admin/v1/organizations/${org.id}`, { retention_days: 7 })
    expect(set.status, set.error ?? '').toBe(200)
    expect(set.data).toMatchObject({ id: org.id, retention_days: 7 })
    expect(await requestTtl()).toContain(
      `toDateTime(request_created_at) + toIntervalDay(7) WHERE organization_id IN ('${org.id}')`,
    )
    let listed: { id: string; retention_days: number | null } | undefined
    for (let offset = 0; !listed; offset += 100) {
      const page = await adminApi.get(`/admin/v1/organizations?offset=${offset}&limit=100`)
      expect(page.status, page.error ?? '').toBe(200)
      listed = page.data.find((o: { id: string }) => o.id === org.id)
      if (page.data.length < 100) break
    }
    expect(listed).toMatchObject({ retention_days: 7 })

    // Its requests older than 7 days go; its newer ones, and another organization's, stay.
    const other = randomUUID()
    const at = (days: number) => new Date(Date.now() - days * DAY)
    const events = [
      sampleEvent({ organization_id: org.id, created_at: at(10), completed_at: at(10) }),
      sampleEvent({ organization_id: org.id, created_at: at(2), completed_at: at(2) }),
      sampleEvent({ organization_id: other, created_at: at(10), completed_at: at(10) }),
    ]
    await tally.clickhouse.insert({ table: REQUEST_TABLE, values: events.map(toRow), format: 'JSONEachRow' })
    await tally.clickhouse.command({ query: `OPTIMIZE TABLE ${REQUEST_TABLE} FINAL` })
    const ids = async () =>
      (
        await (
          await tally.clickhouse.query({
            query: `SELECT toString(request_id) AS id FROM ${REQUEST_TABLE} WHERE has({orgs:Array(UUID)}, organization_id) ORDER BY id`,
            query_params: { orgs: [org.id, other] },
            format: 'JSONEachRow',
          })
        ).json<{ id: string }>()
      ).map((r) => r.id)
    await waitFor(async () => (await ids()).length === 2, {
      what: "the organization's request older than its 7 days deleted",
      timeoutMs: 30_000,
    })
    expect(await ids()).toEqual([events[1]?.request_id, events[2]?.request_id].sort())

    const unset = await adminApi.patch(`/admin/v1/organizations/${org.id}`, { retention_days: null })
    expect(unset.status, unset.error ?? '').toBe(200)
    expect(unset.data.retention_days).toBeNull()
    expect(await requestTtl()).not.toContain(org.id)
  })

  it('keeps every change when several arrive at once', async () => {
    const orgs = await Promise.all([createOrganization(), createOrganization(), createOrganization()])
    const answers = await Promise.all(
      orgs.map((org, i) => adminApi.patch(`/admin/v1/organizations/${org.id}`, { retention_days: 10 + i })),
    )
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
    const ttl = await requestTtl()
    for (const [i, org] of orgs.entries()) {
      expect(await retentionOf(org.id)).toBe(10 + i)
      expect(ttl).toContain(`toIntervalDay(${10 + i}) WHERE organization_id IN ('${org.id}')`)
    }
  })

  it('answers 404 for an unknown or malformed organization, and 400 naming the field for bad days, changing nothing', async () => {
    const org = await createOrganization()
    const before = await requestTtl()
    const unknown = await adminApi.patch(`/admin/v1/organizations/${randomUUID()}`, { retention_days: 7 })
    expect(unknown).toMatchObject({ status: 404, error: 'Organization not found' })
    const malformed = await adminApi.patch('/admin/v1/organizations/not-a-uuid', { retention_days: 7 })
    expect(malformed.status).toBe(400)
    const bad: [unknown, RegExp][] = [
      [{ retention_days: 0 }, /retention_days.*at least 1/],
      [{ retention_days: 10_001 }, /retention_days.*at most 10000/],
      [{ retention_days: 36_500 }, /retention_days.*at most 10000/],
      [{ retention_days: 1.5 }, /retention_days.*whole number/],
      [{ retention_days: '7' }, /retention_days.*whole number/],
      [{ retention_days: 1e300 }, /retention_days/],
      [{}, /retention_days/],
      [{ retention_days: 7, name: 'x' }, /name/],
      [[7], /JSON object/],
      [null, /.+/],
    ]
    for (const [body, rule] of bad) {
      const res = await adminApi.patch(`/admin/v1/organizations/${org.id}`, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.error).toMatch(rule)
    }
    expect(await retentionOf(org.id)).toBeNull()
    expect(await requestTtl()).toBe(before)
  })

  it("refuses an organization's own admin key, and no key", async () => {
    const org = await createOrganization()
    const keys: Record<string, string>[] = [{ authorization: `Bearer ${org.api_key}` }, {}]
    for (const headers of keys) {
      const res = await callApi(tally.app, 'PATCH', `/admin/v1/organizations/${org.id}`, {
        headers,
        body: { retention_days: 1 },
      })
      expect(res.status).toBe(401)
    }
    expect(await retentionOf(org.id)).toBeNull()
  })

  it('changes nothing in Postgres when ClickHouse cannot take the change', async () => {
    const org = await createOrganization()
    // A keeper whose ClickHouse refuses every connection (a port nothing listens on).
    const client = createClient({
      url: 'http://127.0.0.1:9',
      request_timeout: 2_000,
      log: { level: ClickHouseLogLevel.OFF },
    })
    try {
      const keeper = retentionKeeper(
        tally.sql,
        { client: client as never, layout: SINGLE_NODE },
        undefined,
        pino({ level: 'silent' }),
        10_000,
      )
      const repo = createOrganizationRepo(tally.sql, tally.clickhouse)
      await expect(keeper.change((tx) => repo.setRetention(tx, org.id, 3))).rejects.toThrow()
      expect(await retentionOf(org.id)).toBeNull()
    } finally {
      await client.close()
    }
  })

  it('answers 503 with Retry-After, changing nothing, while a migration holds the lock past its wait', async () => {
    const org = await createOrganization()
    // The API as production composes it, but with a keeper that waits 300 ms for the lock.
    const app = await secondApi(tally, tally.sql, 300)
    // Another process migrating ClickHouse: the lock held on a connection of its own meanwhile.
    const holder = await tally.sql.reserve()
    try {
      await holder`select pg_advisory_lock(${CLICKHOUSE_MIGRATION_LOCK})`
      const res = await app.inject({
        method: 'PATCH',
        url: `/admin/v1/organizations/${org.id}`,
        headers: { ...admin.headers, 'content-type': 'application/json' },
        payload: { retention_days: 3 },
      })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('5')
      expect(res.json().error).toMatch(/migrating ClickHouse or changing a retention; nothing was changed/)
      expect(await retentionOf(org.id)).toBeNull()
    } finally {
      await holder`select pg_advisory_unlock(${CLICKHOUSE_MIGRATION_LOCK})`
      holder.release()
      await app.close()
    }
    // Free again: the same change goes through.
    expect((await adminApi.patch(`/admin/v1/organizations/${org.id}`, { retention_days: 3 })).status).toBe(
      200,
    )
  })
})
