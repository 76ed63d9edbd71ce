import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally.close())

describe('the envelope on failures', () => {
  it('answers unknown routes with 404', async () => {
    const res = await tally.app.inject({ method: 'GET', url: '/v1/nothing-here?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ data: null, error: 'Route GET /v1/nothing-here not found' })
  })

  it('answers malformed JSON and wrong content types with 4xx', async () => {
    const org = await tally.newOrg()
    const headers = { ...org.headers, 'content-type': 'application/json' }
    const bad = await tally.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: '{"name":' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({ data: null, error: 'body: is not valid JSON' })
    const text = await tally.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { ...org.headers, 'content-type': 'text/csv' },
      payload: 'a,b',
    })
    expect(text.statusCode).toBe(415)
    expect(text.json().data).toBeNull()
    const huge = await tally.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers,
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    })
    expect(huge.statusCode).toBe(413)
    expect(huge.json().data).toBeNull()
  })

  it('treats an empty body sent as application/json as no body', async () => {
    const org = await tally.newOrg()
    const created = await tally.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: org.headers,
      payload: { name: 'x' },
    })
    const id = created.json().data.id
    const headers = { ...org.headers, 'content-type': 'application/json' }
    const deleted = await tally.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${id}`,
      headers,
      payload: '',
    })
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ data: null, error: null })
    // A route that needs a body still says so.
    const empty = await tally.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: '' })
    expect(empty.statusCode).toBe(400)
    expect(empty.json().error).toMatch(/^body: /)
  })

  it('hides internals on 500 and says which request failed', async () => {
    const broken = await startTestTally()
    try {
      const org = await broken.newOrg()
      // A dependency failing for real: the API's Postgres pool is gone.
      await broken.sql.end()
      const res = await broken.app.inject({
        method: 'GET',
        url: '/v1/api-keys',
        headers: { ...org.headers, 'x-request-id': 'req-123' },
      })
      expect(res.statusCode).toBe(500)
      expect(res.json()).toEqual({ data: null, error: 'Internal server error (request id req-123)' })
      expect(res.headers['x-request-id']).toBe('req-123')
      const ready = await broken.app.inject({ method: 'GET', url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json().data.engines.postgres).toBe('unavailable')
    } finally {
      await broken.close()
    }
  })
})

describe('OpenAPI', () => {
  it('documents every route with its schemas and the bearer scheme', async () => {
    const doc = (await tally.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    expect(doc.openapi).toMatch(/^3\./)
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' })
    const create = doc.paths['/v1/api-keys'].post
    expect(create.requestBody.content['application/json'].schema.properties.name).toBeDefined()
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '429', '500']))
  })
})
