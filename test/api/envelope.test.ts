import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { rawConnection, rawHttp } from '../support/raw-http.ts'
import { waitFor } from '../support/wait.ts'

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
      // A failure like any other: error is set.
      expect(ready.json().error).toBe('Not ready: postgres unavailable')
    } finally {
      await broken.close()
    }
  })
})

describe('Postgres dropping a connection mid-transaction', () => {
  it('answers 503, keeps the data as it was, and the next request succeeds', async () => {
    const org = await tally.newOrg()
    const created = await callApi(tally.app, 'POST', '/v1/api-keys', { as: org, body: { name: 'cut' } })
    expect(created.status, created.error ?? '').toBe(201)
    const keyId = created.data.id as string
    // Another session holds the key's row, so the DELETE's transaction waits on it, open.
    const holder = await tally.sql.reserve()
    try {
      await holder`begin`
      await holder`select 1 from api_keys where id = ${keyId} for update`
      const deleting = callApi(tally.app, 'DELETE', `/v1/api-keys/${keyId}`, { as: org })
      const blocked = await waitFor(
        async () => {
          const [row] = await tally.sql<{ pid: number }[]>`
            select pid from pg_stat_activity
            where wait_event_type = 'Lock' and query like '%delete from api_keys%' and datname = current_database()`
          return row?.pid
        },
        { what: "the DELETE's transaction waiting on the held row" },
      )
      await tally.sql`select pg_terminate_backend(${blocked})`
      expect(await deleting).toEqual({
        status: 503,
        data: null,
        error: 'Postgres is unavailable for now; retry the request',
      })
      await holder`rollback`
    } finally {
      holder.release()
    }
    const listed = await callApi(tally.app, 'GET', '/v1/api-keys', { as: org })
    expect(listed.data.map((k: { id: string }) => k.id)).toContain(keyId)
    const again = await callApi(tally.app, 'DELETE', `/v1/api-keys/${keyId}`, { as: org })
    expect(again).toEqual({ status: 200, data: null, error: null })
  })
})

describe('the envelope on what is refused before any route runs', () => {
  it.each([
    [
      'a path parameter over 100 characters',
      `/v1/api-keys/${'a'.repeat(101)}`,
      414,
      'path: a path parameter is longer than 100 characters',
    ],
    ['a percent sign that encodes nothing', '/v1/api-keys/%ZZ', 400, 'path: is not valid percent-encoding'],
  ])('answers %s', async (_, url, status, error) => {
    const org = await tally.newOrg()
    const res = await tally.app.inject({
      method: 'DELETE',
      url,
      headers: { ...org.headers, 'x-request-id': 'req-path' },
    })
    expect(res.statusCode).toBe(status)
    expect(res.json()).toEqual({ data: null, error })
    expect(res.headers['x-request-id']).toBe('req-path')
  })

  const get = (headers: string) => `GET /healthz HTTP/1.1\r\n${headers}\r\n`
  it.each([
    [
      'headers over 16 KB',
      get(`Host: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n`),
      431,
      'headers: are larger than 16384 bytes in all',
    ],
    ['bytes that are not HTTP', 'HELLO\r\n\r\n', 400, 'request: is not valid HTTP/1.1 (HPE_INVALID_METHOD)'],
    [
      'an HTTP/1.1 request without Host',
      get('Connection: close\r\n'),
      400,
      'headers.host: is required in HTTP/1.1',
    ],
    [
      'an Expect other than 100-continue',
      get('Host: x\r\nExpect: 200-ok\r\nConnection: close\r\n'),
      417,
      'headers.expect: only 100-continue is supported',
    ],
  ])('answers %s (Node refuses these before fastify)', async (_, request, status, error) => {
    const res = await rawHttp(tally.url, request)
    expect(res.status).toBe(status)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(res.body)).toEqual({ data: null, error })
  })
})

describe('while the server closes', () => {
  it('answers a request that arrives on an open connection with 503 in the envelope', async () => {
    const closing = await startTestTally()
    let unlock = () => {}
    try {
      const org = await closing.newOrg()
      const key = (await callApi(closing.app, 'POST', '/v1/api-keys', { as: org, body: { name: 'held' } }))
        .data
      // The first request waits on a row lock, so the connection is busy when the close begins.
      let lockHeld = () => {}
      const held = new Promise<void>((resolve) => {
        lockHeld = resolve
      })
      const locked = closing.sql.begin(async (tx) => {
        await tx`select 1 from api_keys where id = ${key.id} for update`
        lockHeld()
        await new Promise<void>((resolve) => {
          unlock = resolve
        })
      })
      await held
      const connection = rawConnection(closing.url)
      connection.send(
        `DELETE /v1/api-keys/${key.id} HTTP/1.1\r\nHost: x\r\nAuthorization: ${org.headers.authorization}\r\n\r\n`,
      )
      await waitFor(
        async () =>
          (
            await closing.sql`
              select 1 from pg_stat_activity
              where wait_event_type = 'Lock' and query like '%delete from api_keys%' and datname = current_database()`
          ).length > 0,
        { what: 'the DELETE waiting on the lock' },
      )
      const closed = closing.close()
      await waitFor(() => !closing.app.server.listening, { what: 'the server to stop listening' })
      connection.send('GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n')
      unlock()
      await locked
      const { answers } = await connection.closed
      await closed
      expect(answers.map((a) => [a.status, JSON.parse(a.body)])).toEqual([
        [200, { data: null, error: null }],
        [503, { data: null, error: 'This Tally process is shutting down; retry the request' }],
      ])
    } finally {
      unlock()
      await closing.close()
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
