import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { engines, startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { secondApi } from '../support/second-api.ts'
import { waitFor } from '../support/wait.ts'
import { promptClient, sampleBody } from './client.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally?.close())

/** A second API process in all that matters here: its own Postgres pool, LISTEN connection and cache. */
async function secondProcess(): Promise<{ app: FastifyInstance; sql: postgres.Sql }> {
  const sql = postgres(engines().postgresUrl, { max: 4, onnotice: () => {}, transform: { undefined: null } })
  return { app: await secondApi(tally, sql), sql }
}

const objectsOf = (org: TestOrg) =>
  resolve(tally.config.TALLY_DATA_DIR, 'blobs', 'objects', 'prompts', org.organizationId)
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))

describe('concurrent versions', () => {
  it('gives 20 parallel minor versions from one base 20 distinct minors, none skipped', async () => {
    const api = promptClient(tally, await tally.newOrg())
    const { id, versionId } = await api.create()
    const ids = await Promise.all(Array.from({ length: 20 }, () => api.version(id, versionId, false)))
    expect(new Set(ids).size).toBe(20)
    const versions = (await api.post('/v1/prompt-2025/query/versions', { promptId: id })).data as {
      major_version: number
      minor_version: number
    }[]
    expect(versions.map((v) => `${v.major_version}.${v.minor_version}`).sort()).toEqual(
      ['1.0', ...Array.from({ length: 20 }, (_, i) => `1.${i + 1}`)].sort(),
    )
  })

  it('gives parallel new majors distinct numbers too', async () => {
    const api = promptClient(tally, await tally.newOrg())
    const { id, versionId } = await api.create()
    await Promise.all(Array.from({ length: 8 }, () => api.version(id, versionId, true)))
    const counts = await api.post('/v1/prompt-2025/query/total-versions', { promptId: id })
    expect(counts.data).toEqual({ totalVersions: 9, majorVersions: 9 })
  })
})

describe('the look-up cache', () => {
  it('answers this process with the change at once and another process within moments', async () => {
    const org = await tally.newOrg()
    const api = promptClient(tally, org)
    const second = await secondProcess()
    try {
      const { id, versionId: v10 } = await api.create()
      const v11 = await api.version(id, v10, false)
      const production = (app: FastifyInstance) =>
        callApi(app, 'POST', '/v1/prompt-2025/query/production-version', { as: org, body: { promptId: id } })

      // Both processes have the answer cached.
      expect((await production(tally.app)).data?.id).toBe(v10)
      expect((await production(second.app)).data?.id).toBe(v10)

      await api.post('/v1/prompt-2025/update/environment', {
        promptId: id,
        promptVersionId: v11,
        environment: 'production',
      })
      expect((await production(tally.app)).data?.id).toBe(v11)
      await waitFor(async () => (await production(second.app)).data?.id === v11, {
        what: 'the second process to see the move',
        timeoutMs: 5_000,
      })

      await api.delete(`/v1/prompt-2025/${id}`)
      await waitFor(async () => (await production(second.app)).error === 'Prompt not found', {
        what: 'the second process to see the deletion',
        timeoutMs: 5_000,
      })
    } finally {
      await second.app.close()
      await second.sql.end()
    }
  })
})

describe('a version and its body', () => {
  it('leaves no body behind when the row cannot be written (duplicate name)', async () => {
    const org = await tally.newOrg()
    const api = promptClient(tally, org)
    await api.create('Unique')
    const before = filesUnder(objectsOf(org))
    expect(before).toHaveLength(1)
    const dup = await api.post('/v1/prompt-2025', { name: 'Unique', tags: [], promptBody: sampleBody() })
    expect(dup.status).toBe(409)
    expect(filesUnder(objectsOf(org))).toEqual(before)
  })

  it('leaves no row behind when the body cannot be stored', async () => {
    const org = await tally.newOrg()
    const api = promptClient(tally, org)
    // A file where the organization's folder would go makes every write under it fail.
    mkdirSync(resolve(objectsOf(org), '..'), { recursive: true })
    writeFileSync(objectsOf(org), 'in the way')
    const res = await api.post('/v1/prompt-2025', { name: 'Lost', tags: [], promptBody: sampleBody() })
    expect(res.status).toBe(500)
    expect(res.error).toMatch(/^Internal server error \(request id /)
    const listed = await api.post('/v1/prompt-2025/query', {
      search: '',
      tagsFilter: [],
      page: 0,
      pageSize: 10,
    })
    expect(listed.data).toEqual([])
    const [rows] =
      await tally.sql`select count(*)::int as n from prompts where organization_id = ${org.organizationId}`
    expect(rows?.n).toBe(0)
  })
})

describe('server-side failures', () => {
  it('answer 500 with the messages the spec fixes, and nothing internal', async () => {
    const org = await tally.newOrg()
    const { id } = await promptClient(tally, org).create()
    const second = await secondProcess()
    const call = (url: string, body: object) => callApi(second.app, 'POST', url, { as: org, body })
    try {
      // Authenticates once while Postgres is there; the key stays cached.
      expect((await call('/v1/prompt-2025/query/versions', { promptId: id })).status).toBe(200)
      const warm = await call('/v1/prompt-2025/query/production-version', { promptId: id })
      expect(warm.status).toBe(200)
      await second.sql.end()
      // The hot path answers from the cache without Postgres.
      expect(await call('/v1/prompt-2025/query/production-version', { promptId: id })).toEqual(warm)
      expect(
        await call('/v1/prompt-2025/query', { search: '', tagsFilter: [], page: 0, pageSize: 10 }),
      ).toEqual({
        status: 500,
        data: null,
        error: 'Failed to query prompts',
      })
      expect(await call('/v1/prompt-2025/query/versions', { promptId: id })).toEqual({
        status: 500,
        data: null,
        error: 'Failed to retrieve versions',
      })
      // Validation failures on those routes still name the field.
      expect(
        (await call('/v1/prompt-2025/query', { search: '', tagsFilter: [], page: 0, pageSize: 7 })).error,
      ).toBe('body.pageSize: must be one of 10, 25, 50, 100')
    } finally {
      await second.app.close()
    }
  })
})
