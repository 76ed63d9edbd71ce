import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

// The score API end to end on real engines (in-process transport: an answer means written).

let tally: TestTally
let org: TestOrg
let other: TestOrg
let api: ReturnType<typeof apiAs>
let otherApi: ReturnType<typeof apiAs>

async function logRequest(
  as: ReturnType<typeof apiAs>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await as.post('/v1/request/log', {
    model: 'gpt-4o-mini',
    request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    response: { choices: [{ message: { role: 'assistant', content: 'hello' } }] },
    ...extra,
  })
  expect(res.status, JSON.stringify(res)).toBe(201)
  return res.data.request_ids[0]
}

beforeAll(async () => {
  tally = await startTestTally({ env: { TALLY_SCORE_ORPHAN_GRACE: '1s' } })
  org = await tally.newOrg()
  other = await tally.newOrg()
  api = apiAs(tally.app, org)
  otherApi = apiAs(tally.app, other)
})
afterAll(() => tally?.close())

describe('scores', () => {
  it('takes Helicone’s shapes and reads them back applied', async () => {
    const id = await logRequest(api, { session_id: 's-helicone' })
    expect(
      (await api.post(`/v1/request/${id}/score`, { scores: { accuracy: 0.8, correct: true } })).status,
    ).toBe(200)
    expect((await api.post(`/v1/request/${id}/feedback`, { rating: false })).status).toBe(200)
    const listed = await api.get(`/v1/scores?request_id=${id}`)
    expect(listed.status).toBe(200)
    const byName = Object.fromEntries(listed.data.map((s: { name: string }) => [s.name, s]))
    expect(Object.keys(byName).sort()).toEqual(['accuracy', 'correct', 'feedback'])
    expect(byName.accuracy).toMatchObject({
      value: 0.8,
      data_type: 'numeric',
      source: 'api',
      status: 'applied',
    })
    expect(byName.correct).toMatchObject({ value: true, data_type: 'boolean' })
    expect(byName.feedback).toMatchObject({ value: false, data_type: 'boolean', target: { request_id: id } })
  })

  it('upserts by target, name and source, and by id', async () => {
    const id = await logRequest(api)
    const first = await api.post('/v1/scores', { target: { request_id: id }, name: 'quality', value: 2 })
    expect(first.status).toBe(202)
    const again = await api.post('/v1/scores', { target: { request_id: id }, name: 'quality', value: 4 })
    expect(again.data.id).toBe(first.data.id)
    const fromEval = await api.post('/v1/scores', {
      target: { request_id: id },
      name: 'quality',
      value: 3,
      source: 'eval',
    })
    expect(fromEval.data.id).not.toBe(first.data.id)
    const own = randomUUID()
    await api.post('/v1/scores', { id: own, target: { request_id: id }, name: 'tone', value: 'polite' })
    await api.post('/v1/scores', { id: own, target: { request_id: id }, name: 'tone', value: 'curt' })
    const listed = (await api.get(`/v1/scores?request_id=${id}`)).data
    expect(
      listed.map((s: { name: string; source: string; value: unknown }) => [s.name, s.source, s.value]).sort(),
    ).toEqual([
      ['quality', 'api', 4],
      ['quality', 'eval', 3],
      ['tone', 'api', 'curt'],
    ])
  })

  it('scores a session, and deletes a score', async () => {
    await logRequest(api, { session_id: 'ses-graded' })
    const made = await api.post('/v1/scores', {
      target: { session_id: 'ses-graded' },
      name: 'resolved',
      value: true,
      source: 'annotation',
      comment: 'closed by the customer',
    })
    const [stored] = (await api.get(`/v1/scores?session_id=ses-graded`)).data
    expect(stored).toMatchObject({
      id: made.data.id,
      target: { session_id: 'ses-graded' },
      value: true,
      source: 'annotation',
      comment: 'closed by the customer',
      status: 'applied',
    })
    expect((await otherApi.delete(`/v1/scores/${made.data.id}`)).status).toBe(404)
    expect((await api.delete(`/v1/scores/${made.data.id}`)).status).toBe(200)
    expect((await api.get(`/v1/scores?session_id=ses-graded`)).data).toEqual([])
    expect((await api.delete(`/v1/scores/${made.data.id}`)).status).toBe(404)
  })

  it('accepts a score before its request, pending, then orphaned after the grace period', async () => {
    const unknown = randomUUID()
    expect((await api.post(`/v1/request/${unknown}/score`, { scores: { early: 1 } })).status).toBe(200)
    const [pending] = (await api.get(`/v1/scores?request_id=${unknown}`)).data
    expect(pending.status).toBe('pending')
    // Another organization's request id is no different from one not logged yet.
    const theirs = await logRequest(otherApi)
    await api.post(`/v1/request/${theirs}/score`, { scores: { snoop: 1 } })
    await expect
      .poll(
        async () =>
          (await api.get(`/v1/scores?status=orphaned&name=early`)).data.map((s: { id: string }) => s.id),
        {
          timeout: 10_000,
        },
      )
      .toEqual([pending.id])
    await expect
      .poll(async () => (await api.get('/v1/scores?status=orphaned&name=snoop')).data.length, {
        timeout: 10_000,
      })
      .toBe(1)
    expect((await otherApi.get(`/v1/scores?request_id=${theirs}`)).data).toEqual([])
    // Logged late, it applies.
    await logRequest(api, { request_id: unknown })
    expect((await api.get(`/v1/scores?request_id=${unknown}`)).data[0].status).toBe('applied')
  })

  it('checks values against score configs', async () => {
    const config = await api.post('/v1/score-configs', {
      name: 'helpfulness',
      data_type: 'numeric',
      min: 0,
      max: 1,
    })
    expect(config.status).toBe(201)
    expect((await api.post('/v1/score-configs', { name: 'helpfulness', data_type: 'numeric' })).status).toBe(
      409,
    )
    await api.post('/v1/score-configs', {
      name: 'mood',
      data_type: 'categorical',
      categories: ['good', 'bad'],
    })
    const id = await logRequest(api)
    const target = { request_id: id }
    const refused = async (body: unknown, path = '/v1/scores') => {
      const res = await api.post(path, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      return res.error
    }
    expect(await refused({ target, name: 'helpfulness', value: 1.5 })).toMatch(
      /body.value: must be between 0 and 1/,
    )
    expect(await refused({ target, name: 'helpfulness', value: 'high' })).toMatch(
      /body.value: must be a number/,
    )
    expect(await refused({ target, name: 'mood', value: 'meh' })).toMatch(/must be one of "good", "bad"/)
    expect(await refused({ target, name: 'mood', value: 3 })).toMatch(/must be a category/)
    expect(await refused({ scores: { helpfulness: 2 } }, `/v1/request/${id}/score`)).toMatch(
      /body.scores.helpfulness: must be between 0 and 1/,
    )
    expect((await api.post('/v1/scores', { target, name: 'helpfulness', value: 0.4 })).status).toBe(202)
    // Another organization has no such config.
    const theirs = await logRequest(otherApi)
    expect(
      (await otherApi.post('/v1/scores', { target: { request_id: theirs }, name: 'helpfulness', value: 7 }))
        .status,
    ).toBe(202)
    // Bad configs.
    expect(await refused({ name: 'x', data_type: 'boolean', min: 0 }, '/v1/score-configs')).toMatch(
      /body.min/,
    )
    expect(await refused({ name: 'y', data_type: 'categorical' }, '/v1/score-configs')).toMatch(
      /body.categories/,
    )
    expect(await refused({ name: 'z', data_type: 'numeric', min: 2, max: 1 }, '/v1/score-configs')).toMatch(
      /body.min/,
    )
    expect(await refused({ name: 'feedback', data_type: 'numeric' }, '/v1/score-configs')).toMatch(
      /body.data_type/,
    )
    const listed = (await api.get('/v1/score-configs')).data.map((c: { name: string }) => c.name)
    expect(listed).toEqual(['helpfulness', 'mood'])
    expect((await otherApi.delete(`/v1/score-configs/${config.data.id}`)).status).toBe(404)
    expect((await api.delete(`/v1/score-configs/${config.data.id}`)).status).toBe(200)
    expect((await api.post('/v1/scores', { target, name: 'helpfulness', value: 1.5 })).status).toBe(202)
  })

  it('refuses bad values with a 400 naming the field, and stores nothing', async () => {
    const id = await logRequest(api)
    const target = { request_id: id }
    const cases: [unknown, RegExp][] = [
      [{ target, name: 'n', value: null }, /body.value/],
      [{ target, name: '', value: 1 }, /body.name: must not be empty/],
      [{ target, name: 'x'.repeat(201), value: 1 }, /body.name: must be at most 200/],
      [{ target, name: 'a\u0000b', value: 1 }, /NUL/],
      [{ target, name: 'a\nb', value: 1 }, /body.name: must not contain control characters/],
      [{ target, name: 'n', value: 'x'.repeat(501) }, /body.value/],
      [{ target, name: 'n', value: '\ud800' }, /surrogate/],
      [{ target, name: 'n', value: [1] }, /body.value/],
      [{ target, name: 'n', value: { a: 1 } }, /body.value/],
      [{ target: { request_id: 'nope' }, name: 'n', value: 1 }, /body.target/],
      [{ target: {}, name: 'n', value: 1 }, /body.target/],
      [{ target: { request_id: id, session_id: 's' }, name: 'n', value: 1 }, /body.target/],
      [{ target, name: 'n', value: 1, source: 'robot' }, /body.source/],
      [{ target, name: 'feedback', value: 1 }, /body.value: must be true or false/],
      [{ target, name: 'n', value: 1, extra: 1 }, /extra|unrecognized|body/],
    ]
    for (const [body, message] of cases) {
      const res = await api.post('/v1/scores', body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.error).toMatch(message)
    }
    // Infinity cannot be written in JSON; 1e400 reads as it.
    const huge = await tally.app.inject({
      method: 'POST',
      url: '/v1/scores',
      headers: { ...org.headers, 'content-type': 'application/json' },
      payload: `{"target":{"request_id":"${id}"},"name":"n","value":1e400}`,
    })
    expect(huge.statusCode).toBe(400)
    expect(JSON.parse(huge.body).error).toMatch(/body.value: must be a finite number/)
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`s${i}`, i]))
    expect((await api.post(`/v1/request/${id}/score`, { scores: many })).error).toMatch(/at most 50/)
    expect((await api.post(`/v1/request/${id}/score`, { scores: {} })).error).toMatch(/at least one/)
    expect((await api.post(`/v1/request/${id}/feedback`, { rating: 'yes' })).error).toMatch(/body.rating/)
    expect((await api.post('/v1/request/not-a-uuid/feedback', { rating: true })).status).toBe(400)
    expect(
      (await api.put(`/v1/request/${id}/property`, { key: 'Helicone-Session-Id', value: 'x' })).error,
    ).toMatch(/body.key/)
    expect((await api.get(`/v1/scores?request_id=${id}`)).data).toEqual([])
  })

  it('takes a batch whole, or none of it', async () => {
    const id = await logRequest(api, { session_id: 'ses-batch' })
    const batch = await api.post('/v1/scores/batch', {
      scores: [
        { target: { request_id: id }, name: 'b1', value: 1, source: 'eval' },
        { target: { request_id: id }, name: 'b2', value: false, source: 'eval' },
        { target: { session_id: 'ses-batch' }, name: 'b3', value: 'fine', source: 'eval' },
      ],
    })
    expect(batch.status).toBe(202)
    expect(batch.data.ids).toHaveLength(3)
    const stored = (await api.get(`/v1/scores?source=eval&limit=1000`)).data.filter((s: { id: string }) =>
      batch.data.ids.includes(s.id),
    )
    expect(stored.map((s: { name: string }) => s.name).sort()).toEqual(['b1', 'b2', 'b3'])
    // One bad score: a 400 naming it, and nothing of the batch stored.
    const bad = await api.post('/v1/scores/batch', {
      scores: [
        { target: { request_id: id }, name: 'c1', value: 1 },
        { target: { request_id: id }, name: 'feedback', value: 3 },
      ],
    })
    expect(bad.status).toBe(400)
    expect(bad.error).toMatch(/body.scores.1.value: must be true or false/)
    const shape = await api.post('/v1/scores/batch', { scores: [{ target: { request_id: id }, name: 'c2' }] })
    expect(shape.status).toBe(400)
    expect(shape.error).toMatch(/body.scores.0.value/)
    expect((await api.get(`/v1/scores?request_id=${id}&name=c1`)).data).toEqual([])
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({
      target: { request_id: id },
      name: `n${i}`,
      value: i,
    }))
    expect((await api.post('/v1/scores/batch', { scores: tooMany })).error).toMatch(
      /body.scores: must hold at most 1000/,
    )
    expect((await api.post('/v1/scores/batch', { scores: [] })).error).toMatch(
      /body.scores: must hold at least one/,
    )
  })

  it('pages newest first with a cursor', async () => {
    const id = await logRequest(api)
    for (let i = 0; i < 5; i++)
      await api.post('/v1/scores', { target: { request_id: id }, name: `p${i}`, value: i })
    const seen: string[] = []
    let cursor = ''
    for (let n = 0; n < 5; n++) {
      const page = await tally.app.inject({
        method: 'GET',
        url: `/v1/scores?request_id=${id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        headers: org.headers,
      })
      const body = JSON.parse(page.body)
      seen.push(...body.data.map((s: { name: string }) => s.name))
      if (!body.next_cursor) break
      cursor = body.next_cursor
    }
    expect(seen.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4'])
    const theirs = await tally.app.inject({
      method: 'GET',
      url: `/v1/scores?cursor=${cursor}`,
      headers: other.headers,
    })
    expect(theirs.statusCode).toBe(400)
  })
})
