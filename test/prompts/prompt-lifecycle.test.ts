import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { promptClient, sampleBody } from './client.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally?.close())

const newClient = async () => promptClient(tally, await tally.newOrg())

describe('creating a prompt', () => {
  it('creates version 1.0 with "First version.", deployed to production, model from the body', async () => {
    const api = await newClient()
    const res = await api.post('/v1/prompt-2025', {
      name: 'Support triage',
      tags: ['support', 'triage', 'support'],
      promptBody: sampleBody({ model: 'claude-3-5-haiku' }),
    })
    expect(res.status).toBe(201)
    expect(res.error).toBeNull()
    const { id, versionId } = res.data
    const prompt = await api.get(`/v1/prompt-2025/id/${id}`)
    expect(prompt.data).toMatchObject({ id, name: 'Support triage', tags: ['support', 'triage'] })
    expect(new Date(prompt.data.created_at).toISOString()).toBe(prompt.data.created_at)

    const version = await api.post('/v1/prompt-2025/query/version', { promptVersionId: versionId })
    expect(version.status).toBe(200)
    expect(version.data).toMatchObject({
      id: versionId,
      prompt_id: id,
      model: 'claude-3-5-haiku',
      major_version: 1,
      minor_version: 0,
      commit_message: 'First version.',
      environments: ['production'],
      storage_url: expect.stringContaining(`${id}/${versionId}`),
      s3_url: expect.stringMatching(/^http/),
    })
    expect(version.data).not.toHaveProperty('prompt_body')
  })
})

describe('versions', () => {
  it('numbers majors after the highest and minors within the base major; lists newest first', async () => {
    const api = await newClient()
    const { id, versionId: v10 } = await api.create()
    const v11 = await api.version(id, v10, false)
    const v20 = await api.version(id, v11, true)
    const v12 = await api.version(id, v10, false)
    const v21 = await api.version(id, v20, false)

    const all = await api.post('/v1/prompt-2025/query/versions', { promptId: id })
    expect(all.status).toBe(200)
    expect(all.data.map((v: { id: string }) => v.id)).toEqual([v21, v12, v20, v11, v10])
    expect(
      all.data.map(
        (v: { major_version: number; minor_version: number }) => `${v.major_version}.${v.minor_version}`,
      ),
    ).toEqual(['2.1', '1.2', '2.0', '1.1', '1.0'])
    expect(all.data[0]).not.toHaveProperty('prompt_body')
    expect(all.data[0]).toMatchObject({ commit_message: 'wording', environments: [] })

    const major1 = await api.post('/v1/prompt-2025/query/versions', { promptId: id, majorVersion: 1 })
    expect(major1.data.map((v: { id: string }) => v.id)).toEqual([v12, v11, v10])

    const counts = await api.post('/v1/prompt-2025/query/total-versions', { promptId: id })
    expect(counts).toMatchObject({ status: 200, data: { totalVersions: 5, majorVersions: 2 } })
  })

  it('deploys a new version to the environment named on creation, moving it from the previous holder', async () => {
    const api = await newClient()
    const { id, versionId: v10 } = await api.create()
    const v11 = await api.version(id, v10, false, sampleBody({ temperature: 0.9 }), 'production')
    const production = await api.post('/v1/prompt-2025/query/production-version', { promptId: id })
    expect(production.data).toMatchObject({ id: v11, minor_version: 1, environments: ['production'] })
    const old = await api.post('/v1/prompt-2025/query/version', { promptVersionId: v10 })
    expect(old.data.environments).toEqual([])
  })
})

describe('look-ups', () => {
  it('v1 links to the body, v2 inlines it, prompt-body returns it; the link needs no auth header', async () => {
    const api = await newClient()
    const body = sampleBody({ response_format: { type: 'json_object' } })
    const { id, versionId } = await api.create(undefined, [], body)
    const staging = await api.version(id, versionId, false, sampleBody({ temperature: 1.1 }), 'staging')

    const v2 = await api.post('/v2/prompt-2025/query/version', { promptVersionId: versionId })
    expect(v2.status).toBe(200)
    expect(v2.data.prompt_body).toEqual(body)
    expect(v2.data).toMatchObject({ id: versionId, s3_url: expect.any(String) })

    const v2prod = await api.post('/v2/prompt-2025/query/production-version', { promptId: id })
    expect(v2prod.data).toMatchObject({ id: versionId, prompt_body: body })
    const v2env = await api.post('/v2/prompt-2025/query/environment-version', {
      promptId: id,
      environment: 'staging',
    })
    expect(v2env.data).toMatchObject({ id: staging, prompt_body: { temperature: 1.1 } })

    const v1env = await api.post('/v1/prompt-2025/query/environment-version', {
      promptId: id,
      environment: 'staging',
    })
    expect(v1env.data).toMatchObject({ id: staging, environments: ['staging'] })
    expect(v1env.data).not.toHaveProperty('prompt_body')

    const direct = await api.get(`/v1/prompt-2025/${versionId}/prompt-body`)
    expect(direct).toMatchObject({ status: 200, data: body, error: null })

    // The embedded store's link, served by the API itself with no Authorization header.
    const link = new URL(v2.data.s3_url)
    const viaLink = await tally.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
    expect(viaLink.statusCode).toBe(200)
    expect(viaLink.json()).toEqual(body)
    const tampered = await tally.app.inject({
      method: 'GET',
      url: `${link.pathname}${link.search.replace(/signature=([0-9a-f])/, (_m, c) => `signature=${c === '0' ? '1' : '0'}`)}`,
    })
    expect(tampered.statusCode).toBe(403)
  })
})

describe('environments', () => {
  it('moves an environment between versions, lets a version hold several, removes non-production ones', async () => {
    const api = await newClient()
    const { id, versionId: v10 } = await api.create()
    const v11 = await api.version(id, v10, false)

    const assign = (versionId: string, environment: string) =>
      api.post('/v1/prompt-2025/update/environment', {
        promptId: id,
        promptVersionId: versionId,
        environment,
      })
    expect((await assign(v11, 'staging')).data.environments).toEqual(['staging'])
    expect((await assign(v11, 'qa-1')).data.environments).toEqual(['qa-1', 'staging'])
    const moved = await assign(v10, 'staging')
    expect(moved.status).toBe(200)
    expect(moved.data.environments).toEqual(['production', 'staging'])
    expect(
      (await api.post('/v1/prompt-2025/query/version', { promptVersionId: v11 })).data.environments,
    ).toEqual(['qa-1'])

    // Moving production makes the new holder the production version.
    await assign(v11, 'production')
    const production = await api.post('/v1/prompt-2025/query/production-version', { promptId: id })
    expect(production.data.id).toBe(v11)

    const removed = await api.post('/v1/prompt-2025/remove/environment', {
      promptId: id,
      promptVersionId: v10,
      environment: 'staging',
    })
    expect(removed).toMatchObject({ status: 200, data: { id: v10, environments: [] } })
    const gone = await api.post('/v1/prompt-2025/query/environment-version', {
      promptId: id,
      environment: 'staging',
    })
    expect(gone).toMatchObject({
      status: 404,
      data: null,
      error: 'No version of this prompt is deployed to "staging"',
    })

    expect((await api.get('/v1/prompt-2025/environments')).data).toEqual(['production', 'qa-1'])
  })
})

describe('the prompt catalogue', () => {
  it('searches names case-insensitively in part, filters by any of the tags, pages in a stable order', async () => {
    const api = await newClient()
    const a = await api.create('Billing assistant', ['billing', 'en'])
    const b = await api.create('billing escalations', ['billing'])
    const c = await api.create('Onboarding_100%', ['onboarding', 'en'])
    await api.create('Other', [])

    const query = (search: string, tagsFilter: string[], page = 0, pageSize = 10) =>
      api.post('/v1/prompt-2025/query', { search, tagsFilter, page, pageSize })
    const ids = (res: { data: { id: string }[] }) => res.data.map((p) => p.id)

    expect(ids(await query('BILLING', []))).toEqual([b.id, a.id])
    expect(ids(await query('', ['en']))).toEqual([c.id, a.id])
    expect(ids(await query('', ['onboarding', 'billing']))).toEqual([c.id, b.id, a.id])
    // LIKE wildcards in the search match themselves.
    expect(ids(await query('_100%', []))).toEqual([c.id])
    expect(ids(await query('g_e', []))).toEqual([])
    expect((await query('', [])).data).toHaveLength(4)
    const first = await query('', [], 0, 10)
    expect(first.data[0]).toEqual({
      id: expect.any(String),
      name: 'Other',
      tags: [],
      created_at: expect.any(String),
    })
    expect((await query('', [], 1, 10)).data).toEqual([])

    expect((await api.get('/v1/prompt-2025/tags')).data).toEqual(['billing', 'en', 'onboarding'])
  })

  it('renames and retags a prompt without touching its versions', async () => {
    const api = await newClient()
    const { id, versionId } = await api.create('Draft', ['a'])
    const renamed = await api.post(`/v1/prompt-2025/id/${id}/rename`, { name: 'Final' })
    expect(renamed).toMatchObject({ status: 200, data: { id, name: 'Final', tags: ['a'] } })
    const retagged = await api.patch(`/v1/prompt-2025/id/${id}/tags`, { tags: ['b', 'c', 'b'] })
    expect(retagged).toMatchObject({ status: 200, data: { name: 'Final', tags: ['b', 'c'] } })
    const version = await api.post('/v1/prompt-2025/query/version', { promptVersionId: versionId })
    expect(version.data).toMatchObject({ major_version: 1, minor_version: 0, environments: ['production'] })
  })

  it('deletes a version with its body, and a whole prompt with all of its versions', async () => {
    const api = await newClient()
    const { id, versionId: v10 } = await api.create()
    const v11 = await api.version(id, v10, false)
    const v11Key = (await api.post('/v1/prompt-2025/query/version', { promptVersionId: v11 })).data
      .storage_url
    expect(await tally.blobs.get(v11Key)).not.toBeNull()

    const deleted = await api.delete(`/v1/prompt-2025/${id}/${v11}`)
    expect(deleted).toMatchObject({ status: 200, data: null, error: null })
    expect(await tally.blobs.get(v11Key)).toBeNull()
    expect((await api.post('/v1/prompt-2025/query/version', { promptVersionId: v11 })).status).toBe(404)
    expect(
      (await api.post('/v1/prompt-2025/query/total-versions', { promptId: id })).data.totalVersions,
    ).toBe(1)

    const v10Key = (await api.post('/v1/prompt-2025/query/version', { promptVersionId: v10 })).data
      .storage_url
    expect(await api.delete(`/v1/prompt-2025/${id}`)).toMatchObject({ status: 200, data: null, error: null })
    expect(await tally.blobs.get(v10Key)).toBeNull()
    expect((await api.get(`/v1/prompt-2025/id/${id}`)).status).toBe(404)
    expect((await api.post('/v1/prompt-2025/query/production-version', { promptId: id })).error).toBe(
      'Prompt not found',
    )
  })

  it('documents every prompt route in the OpenAPI document', async () => {
    const res = await tally.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    const paths = Object.keys(res.json().paths)
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v1/prompt-2025',
        '/v1/prompt-2025/query',
        '/v1/prompt-2025/update',
        '/v2/prompt-2025/query/version',
        '/v1/prompt-2025/{promptVersionId}/prompt-body',
        '/v1/prompt-2025/{promptId}/{versionId}',
      ]),
    )
  })
})
