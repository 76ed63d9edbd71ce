import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally.close())

const keys = (headers: Record<string, string>) =>
  tally.app.inject({ method: 'GET', url: '/v1/api-keys', headers })

describe('authentication', () => {
  it.each([
    ['no header', {}],
    ['an unknown key', { authorization: 'Bearer tly_not-a-key' }],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 in the envelope for %s', async (_, headers) => {
    const res = await keys(headers)
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ data: null, error: expect.stringMatching(/Bearer <API_KEY>/) })
  })

  it('leaves health, docs and the OpenAPI document open', async () => {
    for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs/']) {
      expect((await tally.app.inject({ method: 'GET', url })).statusCode).toBe(200)
    }
  })
})

describe('API keys', () => {
  it('creates a key whose secret is shown once, lists without secrets, and deletes it for good', async () => {
    const org = await tally.newOrg()
    const created = await tally.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: org.headers,
      payload: { name: 'ci' },
    })
    expect(created.statusCode).toBe(201)
    const key = created.json().data
    expect(key).toMatchObject({
      name: 'ci',
      role: 'member',
      api_key: expect.stringMatching(/^tly_[A-Za-z0-9_-]{43}$/),
    })
    expect(key.api_key.startsWith(key.key_prefix)).toBe(true)

    const listed = (await keys(org.headers)).json().data
    expect(listed.map((k: { id: string }) => k.id)).toContain(key.id)
    expect(JSON.stringify(listed)).not.toContain(key.api_key)
    const [stored] = await tally.sql`select key_hash from api_keys where id = ${key.id}`
    expect(stored?.key_hash.toString('hex')).not.toContain(Buffer.from(key.api_key).toString('hex'))

    expect((await keys({ authorization: `Bearer ${key.api_key}` })).statusCode).toBe(200)
    const deleted = await tally.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${key.id}`,
      headers: org.headers,
    })
    expect(deleted.json()).toEqual({ data: null, error: null })
    expect((await keys({ authorization: `Bearer ${key.api_key}` })).statusCode).toBe(401)
  })

  it('lets only admin keys manage keys, and no key delete itself', async () => {
    const org = await tally.newOrg()
    const member = (
      await tally.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: org.headers,
        payload: { name: 'm' },
      })
    ).json().data
    const asMember = { authorization: `Bearer ${member.api_key}` }
    const refused = await tally.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: asMember,
      payload: { name: 'x' },
    })
    expect(refused.statusCode).toBe(403)
    expect(refused.json().data).toBeNull()
    const [self] = (await keys(org.headers)).json().data.filter((k: { role: string }) => k.role === 'admin')
    const selfDelete = await tally.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${self.id}`,
      headers: org.headers,
    })
    expect(selfDelete.statusCode).toBe(400)
    expect(selfDelete.json().error).toBe('id: a key cannot delete itself')
  })

  it("never shows or deletes another organization's keys", async () => {
    const a = await tally.newOrg()
    const b = await tally.newOrg()
    const bKeys = (await keys(b.headers)).json().data
    const aKeys = (await keys(a.headers)).json().data
    expect(aKeys.map((k: { id: string }) => k.id)).not.toContain(bKeys[0].id)
    const res = await tally.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${bKeys[0].id}`,
      headers: a.headers,
    })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ data: null, error: 'API key not found' })
    expect((await keys(b.headers)).statusCode).toBe(200)
  })

  it('names the field and the rule for bad input and changes nothing', async () => {
    const org = await tally.newOrg()
    const before = (await keys(org.headers)).json().data.length
    const cases: [unknown, RegExp][] = [
      [{ name: '' }, /^body\.name: must not be empty$/],
      [{ name: 'x', role: 'owner' }, /^body\.role: /],
      [{}, /^body\.name: /],
    ]
    for (const [payload, message] of cases) {
      const res = await tally.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: org.headers,
        payload: payload as object,
      })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toMatch(message)
    }
    const badId = await tally.app.inject({
      method: 'DELETE',
      url: '/v1/api-keys/not-a-uuid',
      headers: org.headers,
    })
    expect(badId.statusCode).toBe(400)
    expect(badId.json().error).toBe('params.id: must be a UUID')
    expect((await keys(org.headers)).json().data.length).toBe(before)
  })
})
