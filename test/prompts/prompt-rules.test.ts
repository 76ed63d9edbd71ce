import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { promptClient, sampleBody } from './client.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally?.close())

const newClient = async () => promptClient(tally, await tally.newOrg())

describe('request validation', () => {
  it('refuses a pageSize outside 10, 25, 50, 100 and names the field and the rule', async () => {
    const api = await newClient()
    for (const pageSize of [0, 20, 1000, '10']) {
      const res = await api.post('/v1/prompt-2025/query', { search: '', tagsFilter: [], page: 0, pageSize })
      expect(res).toMatchObject({
        status: 400,
        data: null,
        error: 'body.pageSize: must be one of 10, 25, 50, 100',
      })
    }
    const negative = await api.post('/v1/prompt-2025/query', {
      search: '',
      tagsFilter: [],
      page: -1,
      pageSize: 10,
    })
    expect(negative).toMatchObject({ status: 400, error: 'body.page: must be at least 0' })
    const missing = await api.post('/v1/prompt-2025/query', { tagsFilter: [], page: 0, pageSize: 10 })
    expect(missing).toMatchObject({ status: 400, error: 'body.search: must be a string' })
  })

  it('refuses bodies of the wrong types, naming the field', async () => {
    const api = await newClient()
    const create = (promptBody: unknown, extra: object = {}) =>
      api.post('/v1/prompt-2025', { name: `p-${randomUUID()}`, tags: [], promptBody, ...extra })

    expect(await create(sampleBody({ temperature: 'hot' }))).toMatchObject({
      status: 400,
      error: 'body.promptBody.temperature: must be a number',
    })
    expect(await create(sampleBody({ max_tokens: 1.5 }))).toMatchObject({
      status: 400,
      error: 'body.promptBody.max_tokens: must be an integer',
    })
    expect(await create(sampleBody({ messages: [{ role: 'user', content: 42 }] }))).toMatchObject({
      status: 400,
      error: 'body.promptBody.messages.0.content: must be a string, an array of content parts or null',
    })
    expect(await create(sampleBody({ messages: [] }))).toMatchObject({
      status: 400,
      error: 'body.promptBody.messages: must hold at least one message',
    })
    const { model: _model, ...noModel } = sampleBody()
    expect(await create(noModel)).toMatchObject({
      status: 400,
      error: 'body.promptBody.model: is required: a string naming the model',
    })
    expect(await create(sampleBody(), { tags: 'x' })).toMatchObject({
      status: 400,
      error: 'body.tags: must be an array of strings',
    })
    expect(await create(sampleBody(), { name: '   ' })).toMatchObject({
      status: 400,
      error: 'body.name: must not be empty',
    })

    const { id, versionId } = await api.create()
    const update = await api.post('/v1/prompt-2025/update', {
      promptId: id,
      promptVersionId: versionId,
      newMajorVersion: 'yes',
      commitMessage: 'x',
      promptBody: sampleBody(),
    })
    expect(update).toMatchObject({ status: 400, error: 'body.newMajorVersion: must be true or false' })
    const badEnv = await api.post('/v1/prompt-2025/update/environment', {
      promptId: id,
      promptVersionId: versionId,
      environment: 'Staging!',
    })
    expect(badEnv).toMatchObject({
      status: 400,
      error: 'body.environment: must be 1 to 64 lowercase letters, digits, - or _',
    })
    const longEnv = await api.post('/v1/prompt-2025/update/environment', {
      promptId: id,
      promptVersionId: versionId,
      environment: 'a'.repeat(65),
    })
    expect(longEnv.status).toBe(400)
    expect((await api.get('/v1/prompt-2025/not-a-uuid/prompt-body')).error).toBe(
      'params.promptVersionId: must be a UUID',
    )
  })

  it('refuses a create or update body larger than 512 KiB with 413, storing nothing', async () => {
    const api = await newClient()
    const huge = sampleBody({ messages: [{ role: 'user', content: 'x'.repeat(600 * 1024) }] })
    const res = await api.post('/v1/prompt-2025', { name: 'huge', tags: [], promptBody: huge })
    expect(res).toMatchObject({
      status: 413,
      data: null,
      error: 'body: is larger than this endpoint accepts',
    })
    const { id, versionId } = await api.create()
    const update = await api.post('/v1/prompt-2025/update', {
      promptId: id,
      promptVersionId: versionId,
      newMajorVersion: false,
      commitMessage: 'big',
      promptBody: huge,
    })
    expect(update.status).toBe(413)
    expect(
      (await api.post('/v1/prompt-2025/query', { search: 'huge', tagsFilter: [], page: 0, pageSize: 10 }))
        .data,
    ).toEqual([])
    expect(
      (await api.post('/v1/prompt-2025/query/total-versions', { promptId: id })).data.totalVersions,
    ).toBe(1)
  })
})

describe('authentication', () => {
  it('answers 401 without a valid API key, on every kind of prompt route', async () => {
    for (const [method, url] of [
      ['POST', '/v1/prompt-2025/query/production-version'],
      ['GET', `/v1/prompt-2025/${randomUUID()}/prompt-body`],
      ['POST', '/v2/prompt-2025/query/version'],
    ] as const) {
      const res = await tally.app.inject({
        method,
        url,
        headers: { authorization: 'Bearer tly_nope' },
        payload: {},
      })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toMatchObject({ data: null, error: expect.stringContaining('API key') })
    }
  })
})

describe('names', () => {
  it('refuses a second prompt with the same name in one organization, ignoring case, but not across organizations', async () => {
    const api = await newClient()
    await api.create('Greeting')
    const again = await api.post('/v1/prompt-2025', { name: 'greeting', tags: [], promptBody: sampleBody() })
    expect(again).toMatchObject({
      status: 409,
      data: null,
      error: 'body.name: a prompt named "greeting" already exists',
    })
    const { id } = await api.create('Farewell')
    const rename = await api.post(`/v1/prompt-2025/id/${id}/rename`, { name: 'GREETING' })
    expect(rename).toMatchObject({
      status: 409,
      error: 'body.name: a prompt named "GREETING" already exists',
    })

    const other = await newClient()
    expect(
      (await other.post('/v1/prompt-2025', { name: 'Greeting', tags: [], promptBody: sampleBody() })).status,
    ).toBe(201)
  })
})

describe('unknown ids and other organizations', () => {
  it("answers another organization's ids exactly as it answers ids that do not exist", async () => {
    const owner = await newClient()
    const stranger = await newClient()
    const { id, versionId } = await owner.create()
    const missingPrompt = randomUUID()
    const missingVersion = randomUUID()

    const probes = (promptId: string, promptVersionId: string) => [
      stranger.get(`/v1/prompt-2025/id/${promptId}`),
      stranger.post(`/v1/prompt-2025/id/${promptId}/rename`, { name: 'mine now' }),
      stranger.patch(`/v1/prompt-2025/id/${promptId}/tags`, { tags: ['x'] }),
      stranger.post('/v1/prompt-2025/query/versions', { promptId }),
      stranger.post('/v1/prompt-2025/query/total-versions', { promptId }),
      stranger.post('/v1/prompt-2025/query/version', { promptVersionId }),
      stranger.post('/v2/prompt-2025/query/version', { promptVersionId }),
      stranger.post('/v1/prompt-2025/query/production-version', { promptId }),
      stranger.post('/v2/prompt-2025/query/production-version', { promptId }),
      stranger.post('/v1/prompt-2025/query/environment-version', { promptId, environment: 'production' }),
      stranger.get(`/v1/prompt-2025/${promptVersionId}/prompt-body`),
      stranger.post('/v1/prompt-2025/update', {
        promptId,
        promptVersionId,
        newMajorVersion: false,
        commitMessage: 'x',
        promptBody: sampleBody(),
      }),
      stranger.post('/v1/prompt-2025/update/environment', {
        promptId,
        promptVersionId,
        environment: 'staging',
      }),
      stranger.post('/v1/prompt-2025/remove/environment', {
        promptId,
        promptVersionId,
        environment: 'staging',
      }),
      stranger.delete(`/v1/prompt-2025/${promptId}/${promptVersionId}`),
      stranger.delete(`/v1/prompt-2025/${promptId}`),
    ]
    const theirs = await Promise.all(probes(id, versionId))
    const nobody = await Promise.all(probes(missingPrompt, missingVersion))
    const shape = (r: { status: number; data: unknown; error: string | null }) => [r.status, r.data, r.error]
    expect(theirs.map(shape)).toEqual(nobody.map(shape))
    for (const r of theirs) expect(r.status).toBe(404)

    // And the owner's prompt is untouched.
    const still = await owner.post('/v1/prompt-2025/query/versions', { promptId: id })
    expect(still.data).toHaveLength(1)
    expect((await owner.get(`/v1/prompt-2025/id/${id}`)).data.tags).toEqual([])
    expect(
      (await stranger.post('/v1/prompt-2025/query', { search: '', tagsFilter: [], page: 0, pageSize: 10 }))
        .data,
    ).toEqual([])
  })

  it('refuses a base version that belongs to another prompt of the same organization', async () => {
    const api = await newClient()
    const a = await api.create()
    const b = await api.create()
    const res = await api.post('/v1/prompt-2025/update', {
      promptId: a.id,
      promptVersionId: b.versionId,
      newMajorVersion: false,
      commitMessage: 'x',
      promptBody: sampleBody(),
    })
    expect(res).toMatchObject({ status: 404, error: 'Prompt version not found' })
    const moved = await api.post('/v1/prompt-2025/update/environment', {
      promptId: a.id,
      promptVersionId: b.versionId,
      environment: 'production',
    })
    expect(moved.status).toBe(404)
    expect((await api.post('/v1/prompt-2025/query/production-version', { promptId: a.id })).data.id).toBe(
      a.versionId,
    )
  })
})

describe('production', () => {
  it('cannot be removed, only moved, and its version cannot be deleted', async () => {
    const api = await newClient()
    const { id, versionId: v10 } = await api.create()
    const remove = await api.post('/v1/prompt-2025/remove/environment', {
      promptId: id,
      promptVersionId: v10,
      environment: 'production',
    })
    expect(remove).toMatchObject({
      status: 400,
      data: null,
      error:
        'body.environment: production can only be moved to another version (POST /v1/prompt-2025/update/environment), never removed',
    })
    const del = await api.delete(`/v1/prompt-2025/${id}/${v10}`)
    expect(del).toMatchObject({
      status: 400,
      error:
        'versionId: this is the production version; move production to another version before deleting it',
    })
    expect((await api.post('/v1/prompt-2025/query/production-version', { promptId: id })).data.id).toBe(v10)

    // Once production has moved on, the old version may go.
    const v11 = await api.version(id, v10, false, sampleBody(), 'production')
    expect((await api.delete(`/v1/prompt-2025/${id}/${v10}`)).status).toBe(200)
    expect((await api.post('/v1/prompt-2025/query/production-version', { promptId: id })).data.id).toBe(v11)
  })

  it('refuses to remove an environment the version does not hold', async () => {
    const api = await newClient()
    const { id, versionId } = await api.create()
    const res = await api.post('/v1/prompt-2025/remove/environment', {
      promptId: id,
      promptVersionId: versionId,
      environment: 'staging',
    })
    expect(res).toMatchObject({
      status: 400,
      error: 'body.environment: this version is not deployed to "staging"',
    })
  })
})

describe('immutability', () => {
  it("leaves every existing version's body and numbers as they were, whatever else happens", async () => {
    const api = await newClient()
    const original = sampleBody({ temperature: 0.1 })
    const { id, versionId: v10 } = await api.create('Immutable', [], original)
    const snapshot = async (versionId: string) => {
      const v = (await api.post('/v2/prompt-2025/query/version', { promptVersionId: versionId })).data
      return {
        body: v.prompt_body,
        numbers: [v.major_version, v.minor_version],
        model: v.model,
        message: v.commit_message,
        created: v.created_at,
      }
    }
    const before = await snapshot(v10)

    const v11 = await api.version(id, v10, false, sampleBody({ temperature: 0.5 }), 'production')
    await api.version(id, v11, true, sampleBody({ model: 'gpt-4.1' }))
    await api.post('/v1/prompt-2025/update/environment', {
      promptId: id,
      promptVersionId: v10,
      environment: 'staging',
    })
    await api.post(`/v1/prompt-2025/id/${id}/rename`, { name: 'Renamed' })
    await api.patch(`/v1/prompt-2025/id/${id}/tags`, { tags: ['t'] })
    // A create that names an existing version's numbers cannot take them: there is no such input,
    // and unknown keys are refused.
    const sneaky = await api.post('/v1/prompt-2025/update', {
      promptId: id,
      promptVersionId: v10,
      newMajorVersion: false,
      commitMessage: 'x',
      promptBody: sampleBody(),
      major_version: 1,
      minor_version: 0,
    })
    expect(sneaky.status).toBe(400)
    expect(sneaky.error).toMatch(/^body: Unrecognized keys?: "major_version"/)

    expect(await snapshot(v10)).toEqual(before)
    expect((await api.get(`/v1/prompt-2025/${v10}/prompt-body`)).data).toEqual(original)
    const numbers = (await api.post('/v1/prompt-2025/query/versions', { promptId: id })).data.map(
      (v: { major_version: number; minor_version: number }) => `${v.major_version}.${v.minor_version}`,
    )
    expect(numbers).toEqual(['2.0', '1.1', '1.0'])
  })
})
