import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKeyRepo } from '../../services/api/keys/repo.ts'
import { apiAs, type Caller, callApi } from '../support/api.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'
import { createScratchDatabase } from '../support/scratch-database.ts'
import { waitFor } from '../support/wait.ts'

const ADMIN_KEY = `tally-admin-${randomUUID()}`
const admin: Caller = { headers: { authorization: `Bearer ${ADMIN_KEY}` } }
const bearer = (secret: string): Caller => ({ headers: { authorization: `Bearer ${secret}` } })

let tally: TestTally
let adminApi: ReturnType<typeof apiAs>
beforeAll(async () => {
  tally = await startTestTally({ env: { TALLY_ADMIN_API_KEY: ADMIN_KEY } })
  adminApi = apiAs(tally.app, admin)
})
afterAll(() => tally?.close())

async function createOrganization(name = `org-${randomUUID().slice(0, 8)}`) {
  const res = await adminApi.post('/admin/v1/organizations', { name })
  expect(res.status, res.error ?? '').toBe(201)
  return res.data as { id: string; name: string; created_at: string; api_key: string }
}

/** Every organization, page by page, as the list route answers. */
async function listAll(limit = 100) {
  const all: { id: string; name: string; created_at: string }[] = []
  for (let offset = 0; ; offset += limit) {
    const page = await adminApi.get(`/admin/v1/organizations?offset=${offset}&limit=${limit}`)
    expect(page.status, page.error ?? '').toBe(200)
    expect(page.data.length).toBeLessThanOrEqual(limit)
    all.push(...page.data)
    if (page.data.length < limit) return all
  }
}

describe('the admin API switched off', () => {
  it('answers its routes as unknown routes when TALLY_ADMIN_API_KEY is unset', async () => {
    const off = await startTestTally()
    try {
      const id = randomUUID()
      const calls = [
        ['GET', '/admin/v1/organizations'],
        ['POST', '/admin/v1/organizations'],
        ['DELETE', `/admin/v1/organizations/${id}`],
      ] as const
      for (const [method, url] of calls) {
        const res = await callApi(off.app, method, url, {
          as: admin,
          ...(method === 'POST' ? { body: { name: 'x' } } : {}),
        })
        expect(res).toEqual({ status: 404, data: null, error: `Route ${method} ${url} not found` })
      }
      const doc = await off.app.inject({ method: 'GET', url: '/openapi.json' })
      expect(Object.keys(doc.json().paths).filter((path) => path.startsWith('/admin'))).toEqual([])
    } finally {
      await off.close()
    }
  })
})

describe('admin authentication', () => {
  it.each([
    ['no header', {}],
    ['a wrong key of the same length', { authorization: `Bearer ${ADMIN_KEY.replace(/.$/, '_')}` }],
    ['the key with another scheme', { authorization: `Basic ${ADMIN_KEY}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 in the envelope for %s, and changes nothing', async (_, headers) => {
    const name = `refused-${randomUUID()}`
    for (const [method, url] of [
      ['GET', '/admin/v1/organizations'],
      ['POST', '/admin/v1/organizations'],
      ['DELETE', `/admin/v1/organizations/${randomUUID()}`],
    ] as const) {
      const res = await callApi(tally.app, method, url, {
        headers,
        ...(method === 'POST' ? { body: { name } } : {}),
      })
      expect(res).toEqual({
        status: 401,
        data: null,
        error: 'Missing or invalid admin API key: send Authorization: Bearer <TALLY_ADMIN_API_KEY>',
      })
    }
    expect(await tally.sql`select 1 from organizations where name = ${name}`).toHaveLength(0)
  })

  it('counts admin calls in a rate-limit window of their own, with the usual headers', async () => {
    const res = await tally.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations',
      headers: admin.headers,
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['ratelimit-limit']).toBe(String(tally.config.TALLY_RATE_LIMIT_PER_MINUTE))
    expect(Number(res.headers['ratelimit-remaining'])).toBeLessThan(tally.config.TALLY_RATE_LIMIT_PER_MINUTE)
  })

  it("refuses an organization's keys, even its admin key, on admin routes", async () => {
    const org = await tally.newOrg()
    const res = await callApi(tally.app, 'GET', '/admin/v1/organizations', { as: org })
    expect(res.status).toBe(401)
    expect(res.data).toBeNull()
    const removed = await callApi(tally.app, 'DELETE', `/admin/v1/organizations/${org.organizationId}`, {
      as: org,
    })
    expect(removed.status).toBe(401)
    expect((await apiAs(tally.app, org).get('/v1/api-keys')).status).toBe(200)
  })

  it('refuses the admin key on organization routes, even if an organization key has the same secret', async () => {
    // Possible if TALLY_BOOTSTRAP_API_KEY once had the value the admin key has now. (Registered
    // before any look-up of the admin key, which would be cached as unknown for a few seconds.)
    const { organization } = await createApiKeyRepo(tally.sql).createOrganization('same-secret', ADMIN_KEY)
    try {
      const res = await callApi(tally.app, 'GET', '/v1/api-keys', { as: admin })
      expect(res).toEqual({
        status: 401,
        data: null,
        error: 'Missing or invalid API key: send Authorization: Bearer <API_KEY>',
      })
    } finally {
      await tally.sql`delete from organizations where id = ${organization.id}`
    }
  })
})

describe('organizations', () => {
  it('creates an organization whose admin key, shown once, works on its routes', async () => {
    const name = `Acme ${randomUUID().slice(0, 8)}`
    const res = await adminApi.post('/admin/v1/organizations', { name: `  ${name} ` })
    expect(res.status).toBe(201)
    expect(res.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      retention_days: null,
      api_key: expect.stringMatching(/^tly_[A-Za-z0-9_-]{43}$/),
    })
    const org = apiAs(tally.app, bearer(res.data.api_key))
    const keys = await org.get('/v1/api-keys')
    expect(keys.status).toBe(200)
    expect(keys.data).toEqual([expect.objectContaining({ role: 'admin', name: 'admin' })])
    expect(JSON.stringify(keys.data)).not.toContain(res.data.api_key)
    // The new key is an admin key of its organization: it can issue more keys.
    expect((await org.post('/v1/api-keys', { name: 'ci' })).status).toBe(201)
    const [stored] = await tally.sql`
      select key_hash from api_keys where organization_id = ${res.data.id} and name = 'admin'`
    expect(stored?.key_hash).toHaveLength(32)
  })

  it('lists organizations oldest first, page by page', async () => {
    const created = [await createOrganization(), await createOrganization(), await createOrganization()]
    for (const limit of [100, 7]) {
      const all = await listAll(limit)
      const ids = all.map((o) => o.id)
      const positions = created.map((o) => ids.indexOf(o.id))
      expect(positions.every((p) => p >= 0)).toBe(true)
      expect([...positions].sort((a, b) => a - b)).toEqual(positions)
      expect(all[positions[0] as number]).toEqual({
        id: created[0]?.id,
        name: created[0]?.name,
        created_at: created[0]?.created_at,
        retention_days: null,
      })
      const times = all.map((o) => Date.parse(o.created_at))
      expect([...times].sort((a, b) => a - b)).toEqual(times)
    }
    const first = await adminApi.get('/admin/v1/organizations')
    expect(first.data.length).toBeLessThanOrEqual(10)
    // page/pageSize is an alias of offset/limit.
    const byPage = await adminApi.get('/admin/v1/organizations?page=1&pageSize=2')
    expect(byPage.status).toBe(200)
    expect(byPage.data).toEqual((await adminApi.get('/admin/v1/organizations?offset=2&limit=2')).data)
    expect(byPage.data).toHaveLength(2)
  })

  it('deletes an organization with all its data and leaves the others alone', async () => {
    const doomed = await createOrganization()
    const kept = await createOrganization()
    const seeded = new Map<string, { memberKey: string; webhookId: string }>()
    for (const org of [doomed, kept]) seeded.set(org.id, await seed(org.api_key))
    const doomedSeed = seeded.get(doomed.id) as { memberKey: string; webhookId: string }
    const bodyKeys = async (id: string) =>
      (await tally.sql`select storage_key from prompt_versions where organization_id = ${id}`).map(
        (row) => row.storage_key as string,
      )
    const doomedBodies = await bodyKeys(doomed.id)
    const keptBodies = await bodyKeys(kept.id)
    expect(doomedBodies).toHaveLength(2)
    for (const key of doomedBodies) expect(await tally.blobs.get(key)).not.toBeNull()
    const before = await rowCounts(doomed.id, doomedSeed.webhookId)
    for (const [table, n] of Object.entries(before)) expect(n, table).toBeGreaterThan(0)

    const res = await adminApi.delete(`/admin/v1/organizations/${doomed.id}`)
    expect(res).toEqual({ status: 200, data: null, error: null })

    for (const secret of [doomed.api_key, doomedSeed.memberKey]) {
      expect((await callApi(tally.app, 'GET', '/v1/api-keys', { as: bearer(secret) })).status).toBe(401)
    }
    const after = await rowCounts(doomed.id, doomedSeed.webhookId)
    expect(after).toEqual(Object.fromEntries(Object.keys(before).map((table) => [table, 0])))
    for (const key of doomedBodies) expect(await tally.blobs.get(key)).toBeNull()
    expect((await listAll()).map((o) => o.id)).not.toContain(doomed.id)

    const keptCounts = await rowCounts(kept.id, (seeded.get(kept.id) as { webhookId: string }).webhookId)
    for (const [table, n] of Object.entries(keptCounts)) expect(n, table).toBeGreaterThan(0)
    for (const key of keptBodies) expect(await tally.blobs.get(key)).not.toBeNull()
    const keptApi = apiAs(tally.app, bearer(kept.api_key))
    expect((await keptApi.post('/v1/request/query', {})).data).toHaveLength(2)

    const again = await adminApi.delete(`/admin/v1/organizations/${doomed.id}`)
    expect(again).toEqual({ status: 404, data: null, error: 'Organization not found' })
  })

  it('answers 404 for an unknown organization and 400 for a malformed id', async () => {
    expect(await adminApi.delete(`/admin/v1/organizations/${randomUUID()}`)).toEqual({
      status: 404,
      data: null,
      error: 'Organization not found',
    })
    expect(await adminApi.delete('/admin/v1/organizations/not-a-uuid')).toEqual({
      status: 400,
      data: null,
      error: 'params.id: must be a UUID',
    })
  })

  it('names the field and the rule for bad input and creates nothing', async () => {
    const tag = `bad-${randomUUID()}`
    const cases: [unknown, string][] = [
      [{}, 'body.name: must be a string'],
      [{ name: 7 }, 'body.name: must be a string'],
      [{ name: '   ' }, 'body.name: must not be empty'],
      [{ name: `${tag}${'x'.repeat(200)}` }, 'body.name: must be at most 200 characters'],
      [{ name: `${tag}\u0000` }, 'body.name: must not contain NUL (\\u0000)'],
      [{ name: `${tag}\nsecond line` }, 'body.name: must not contain control characters (NUL, newlines, …)'],
      // Bidirectional controls would make a name read otherwise than it is (U+202E flips what follows).
      [
        { name: `${tag}\u202Egpj.exe` },
        'body.name: must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, …)',
      ],
      [
        { name: `${tag}\u2067x\u2069` },
        'body.name: must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, …)',
      ],
      [{ name: tag, plan: 'pro' }, 'body: Unrecognized key: "plan"'],
      [[tag], 'body: must be a JSON object'],
      [undefined, 'body: must be a JSON object'],
    ]
    for (const [body, error] of cases) {
      const res = await adminApi.post('/admin/v1/organizations', body)
      expect({ body, ...res }).toEqual({ body, status: 400, data: null, error })
    }
    expect(await tally.sql`select 1 from organizations where name like ${`${tag}%`}`).toHaveLength(0)

    const queries: [string, string][] = [
      ['limit=0', 'querystring.limit: must be between 1 and 100'],
      ['limit=101', 'querystring.limit: must be between 1 and 100'],
      ['limit=ten', 'querystring.limit: must be a number'],
      ['offset=-1', 'querystring.offset: must be at least 0'],
      ['pageNumber=2', 'querystring: Unrecognized key: "pageNumber"'],
      ['page=1&pageSize=2&offset=2', 'querystring.offset: must be 0 or left out with page and pageSize'],
    ]
    for (const [query, error] of queries) {
      expect(await adminApi.get(`/admin/v1/organizations?${query}`)).toEqual({
        status: 400,
        data: null,
        error,
      })
    }
  })

  it('describes the admin routes in the OpenAPI document under their own key', async () => {
    const doc = (await tally.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect(doc.components.securitySchemes.admin).toMatchObject({ type: 'http', scheme: 'bearer' })
    const paths = doc.paths as Record<string, Record<string, { tags: string[]; security: unknown }>>
    const operations = [
      paths['/admin/v1/organizations']?.post,
      paths['/admin/v1/organizations']?.get,
      paths['/admin/v1/organizations/{id}']?.delete,
    ]
    for (const operation of operations) {
      expect(operation).toMatchObject({ tags: ['admin'], security: [{ admin: [] }] })
    }
  })
})

describe('the first start', () => {
  it('happens once per database: deleting every organization does not make the next start a first start', async () => {
    const db = await createScratchDatabase(engines().postgresUrl, 'tally_bootstrap')
    const start = () => startTestTally({ env: { TALLY_ADMIN_API_KEY: ADMIN_KEY, DATABASE_URL: db.url } })
    try {
      const first = await start()
      const firstAdmin = apiAs(first.app, admin)
      const [created] = (await firstAdmin.get('/admin/v1/organizations')).data
      expect(created).toMatchObject({ name: 'default' })
      expect(await firstAdmin.delete(`/admin/v1/organizations/${created.id}`)).toMatchObject({ status: 200 })
      expect((await firstAdmin.get('/admin/v1/organizations')).data).toEqual([])
      await first.close()

      const second = await start()
      try {
        expect((await apiAs(second.app, admin).get('/admin/v1/organizations')).data).toEqual([])
        expect(await second.sql`select 1 from api_keys`).toHaveLength(0)
      } finally {
        await second.close()
      }
    } finally {
      await db.drop()
    }
  })
})

/**
 * Gives an organization data everywhere Tally keeps it: a member key, a prompt with two versions
 * (bodies in object storage), a webhook with deliveries, and two requests of one session.
 */
async function seed(adminKey: string) {
  const org = apiAs(tally.app, bearer(adminKey))
  const member = await org.post('/v1/api-keys', { name: 'member' })
  expect(member.status).toBe(201)
  const promptBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }
  const prompt = await org.post('/v1/prompt-2025', { name: 'greeting', tags: [], promptBody })
  expect(prompt.status, prompt.error ?? '').toBe(201)
  const version = await org.post('/v1/prompt-2025/update', {
    promptId: prompt.data.id,
    promptVersionId: prompt.data.versionId,
    newMajorVersion: false,
    commitMessage: 'again',
    promptBody,
  })
  expect(version.status, version.error ?? '').toBe(201)
  const webhook = await org.post('/v1/webhooks', { destination: 'https://receiver.invalid/tally' })
  expect(webhook.status, webhook.error ?? '').toBe(201)
  const request = (n: number) => ({
    created_at: `2026-11-01T10:00:0${n}.000Z`,
    latency_ms: 500,
    request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    response: { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    session_id: 'session-1',
  })
  for (const n of [1, 2]) expect((await org.post('/v1/request/log', request(n))).status).toBe(201)
  await waitFor(
    async () =>
      (await tally.sql`select 1 from webhook_deliveries where webhook_id = ${webhook.data.id}`).length === 2,
    { what: 'the deliveries of both requests' },
  )
  return { memberKey: member.data.api_key as string, webhookId: webhook.data.id as string }
}

/** The organization's rows in each Postgres and ClickHouse table that holds them. */
async function rowCounts(organizationId: string, webhookId: string): Promise<Record<string, number>> {
  const [pg] = await tally.sql<Record<string, number>[]>`
    select
      (select count(*) from organizations where id = ${organizationId})::int as organizations,
      (select count(*) from api_keys where organization_id = ${organizationId})::int as api_keys,
      (select count(*) from prompts where organization_id = ${organizationId})::int as prompts,
      (select count(*) from prompt_versions where organization_id = ${organizationId})::int as prompt_versions,
      (select count(*) from prompt_environments e join prompt_versions v on v.id = e.version_id
        where v.organization_id = ${organizationId})::int as prompt_environments,
      (select count(*) from webhooks where organization_id = ${organizationId})::int as webhooks,
      (select count(*) from webhook_deliveries where webhook_id = ${webhookId})::int as webhook_deliveries`
  const clickhouse: Record<string, number> = {}
  // As every query reads them: the parts as they are, and merged at read time (FINAL).
  for (const table of ['request_response_rmt', 'session_hours']) {
    for (const final of ['', ' FINAL']) {
      const result = await tally.clickhouse.query({
        query: `SELECT count() AS n FROM ${table}${final} WHERE organization_id = {org:UUID}`,
        query_params: { org: organizationId },
        format: 'JSONEachRow',
      })
      clickhouse[`${table}${final}`] = Number((await result.json<{ n: number }>())[0]?.n)
    }
  }
  return { ...pg, ...clickhouse }
}
