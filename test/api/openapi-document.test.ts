import { execFile } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { generateTypes } from 'tally-openapi-typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPayload, testEvent } from '../../services/shared/webhooks/payload.ts'
import { generateHmacKey, signatureHeaders } from '../../services/shared/webhooks/signature.ts'
import { callApi } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { type OpenApiDocument, responseSchema, validatorFor } from '../support/openapi.ts'

const root = resolve(import.meta.dirname, '../..')
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

let tally: TestTally
let org: TestOrg
let doc: OpenApiDocument
beforeAll(async () => {
  // With the admin key, so that the /admin/v1 routes are in the document too.
  tally = await startTestTally({ env: { TALLY_ADMIN_API_KEY: randomBytes(32).toString('hex') } })
  org = await tally.newOrg()
  doc = await (await fetch(`${tally.url}/openapi.json`)).json()
})
afterAll(() => tally?.close())

interface Operation {
  method: string
  path: string
  // biome-ignore lint/suspicious/noExplicitAny: an operation object as JSON
  op: any
}

function operations(items: Record<string, Record<string, unknown>> = doc.paths): Operation[] {
  return Object.entries(items).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  )
}

/** Where the document keeps a body's or an answer's example: under JSON, else the first media type. */
// biome-ignore lint/suspicious/noExplicitAny: a content object as JSON
function exampleHolder(content: Record<string, any> | undefined) {
  if (!content) return undefined
  return content['application/json'] ?? Object.values(content)[0]
}

/** `npm run lint:openapi` (Redocly, redocly.yaml) on the document a Tally at `url` serves: no problem. */
async function expectLintClean(url: string) {
  const run = await promisify(execFile)(process.execPath, ['scripts/lint-openapi.ts', url], {
    cwd: root,
  }).catch((err: { stdout: string; stderr: string }) => {
    throw new Error(`lint:openapi failed:\n${err.stdout}\n${err.stderr}`)
  })
  const output = `${run.stdout}\n${run.stderr}`
  expect(output).toContain('Your API description is valid')
  expect(output).not.toMatch(/warning|error/i)
}

describe('the OpenAPI document', () => {
  it('names the address the API listens on as its server, the real port with PORT=0, on /docs too', async () => {
    expect(tally.config.PORT).toBe(0)
    expect(doc.servers).toEqual([{ url: tally.url }])
    expect(new URL(tally.url).port).not.toBe('0')
    const ui = (await (await fetch(`${tally.url}/docs/json`)).json()) as OpenApiDocument
    expect(ui.servers).toEqual([{ url: tally.url }])
  })

  it('passes `npm run lint:openapi` (Redocly, redocly.yaml) without a problem', async () => {
    await expectLintClean(tally.url)
  }, 60_000)

  it('passes the lint without TALLY_ADMIN_API_KEY too, as `npm start` serves it by default', async () => {
    const plain = await startTestTally()
    try {
      const served: OpenApiDocument = await (await fetch(`${plain.url}/openapi.json`)).json()
      expect(Object.keys(served.paths).filter((path) => path.startsWith('/admin/'))).toEqual([])
      expect(Object.keys(served.components.securitySchemes)).toEqual(['bearer'])
      await expectLintClean(plain.url)
    } finally {
      await plain.close()
    }
  }, 60_000)

  it('gives every operation a unique, conventional operationId', () => {
    const callbacks = operations().flatMap(({ op }) =>
      Object.values(op.callbacks ?? {}).flatMap((callback) =>
        operations(callback as Record<string, Record<string, unknown>>),
      ),
    )
    expect(callbacks.map(({ op }) => op.operationId)).toEqual(['requestCompleted', 'scoreCreated'])
    const all = [...operations(), ...callbacks]
    expect(all.length).toBeGreaterThanOrEqual(50)
    const ids = all.map(({ op }) => op.operationId)
    for (const { method, path, op } of all)
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/)
    expect(new Set(ids).size).toBe(ids.length)
    const byRoute = Object.fromEntries(
      operations().map(({ method, path, op }) => [`${method} ${path}`, op.operationId]),
    )
    expect(byRoute).toMatchObject({
      'POST /v1/prompt-2025': 'createPrompt',
      'POST /v1/request/log': 'logRequests',
      'GET /v1/request/{id}': 'getRequest',
      'POST /v1/session/query': 'querySessions',
      'GET /v1/api-keys': 'listApiKeys',
      'POST /v1/webhooks': 'createWebhook',
      'GET /healthz': 'checkHealth',
      'DELETE /admin/v1/organizations/{id}': 'deleteOrganization',
    })
  })

  it('names the shared schemas and refers to them', () => {
    const names = Object.keys(doc.components.schemas)
    expect(names).toEqual(
      expect.arrayContaining([
        'ApiKey',
        'Delivery',
        'ErrorEnvelope',
        'FilterNode',
        'LogEvent',
        'Organization',
        'Prompt',
        'PromptBody',
        'PromptVersion',
        'RequestRecord',
        'Session',
        'Webhook',
        'WebhookPayload',
      ]),
    )
    const data = (method: string, path: string, status: number) =>
      responseSchema(doc, method, path, status).properties.data
    expect(data('GET', '/v1/prompt-2025/id/{promptId}', 200)).toEqual({ $ref: '#/components/schemas/Prompt' })
    expect(data('POST', '/v1/session/query', 200).items).toEqual({ $ref: '#/components/schemas/Session' })
    expect(data('GET', '/v1/request/{id}', 200)).toEqual({ $ref: '#/components/schemas/RequestRecord' })
    expect(data('GET', '/v1/webhooks', 200).items).toEqual({ $ref: '#/components/schemas/Webhook' })
    expect(data('GET', '/v1/api-keys', 200).items).toEqual({ $ref: '#/components/schemas/ApiKey' })
    const sessionBody = doc.paths['/v1/session/query'].post.requestBody.content['application/json'].schema
    expect(sessionBody.properties.filter).toEqual({ $ref: '#/components/schemas/FilterNode' })
    // Every named schema is used, and the names a client sees have no Input/Output variants.
    expect(names.filter((name) => name.endsWith('Input'))).toEqual([])
  })

  it('is what the published types clients/typescript/tally-api.ts were made from', async () => {
    // Out of date: run `npm run clients:types` and commit clients/typescript/tally-api.ts.
    const published = readFileSync(join(root, 'clients/typescript/tally-api.ts'), 'utf8')
    expect(await generateTypes(doc)).toBe(published)
  })

  it('is shaped for code generators: one nullable style, no empty defaults, integer page sizes', () => {
    const problems: string[] = []
    const visit = (value: unknown, path: string, member: boolean): void => {
      if (Array.isArray(value)) for (const [i, v] of value.entries()) visit(v, `${path}/${i}`, false)
      else if (value && typeof value === 'object') {
        const schema = value as Record<string, unknown>
        if (!member && schema.type === 'null' && Object.keys(schema).length === 1)
          problems.push(`${path}: lone null`)
        const { default: fallback } = schema
        if (
          fallback &&
          typeof fallback === 'object' &&
          !Array.isArray(fallback) &&
          Object.keys(fallback).length === 0
        )
          problems.push(`${path}: default {}`)
        for (const union of ['anyOf', 'oneOf']) {
          const members = schema[union]
          if (!Array.isArray(members)) continue
          const others = members.filter((m) => m.type !== 'null')
          if (others.length === 1 && others.length < members.length && typeof others[0].type === 'string')
            problems.push(`${path}: ${union} of a ${others[0].type} and null, not type [T, "null"]`)
          for (const [i, m] of members.entries()) visit(m, `${path}/${union}/${i}`, true)
        }
        for (const [key, v] of Object.entries(schema))
          if (key !== 'anyOf' && key !== 'oneOf') visit(v, `${path}/${key}`, false)
      }
    }
    visit(doc, '', false)
    expect(problems).toEqual([])
    const prompts = doc.paths['/v1/prompt-2025/query'].post.requestBody.content['application/json'].schema
    expect(prompts.properties.pageSize).toMatchObject({ type: 'integer', enum: [10, 25, 50, 100] })
    const tags = operations().flatMap(({ op }) => op.tags)
    expect(tags).toContain('webhooks')
    expect(tags).not.toContain('webhook-deliveries')
  })

  it('declares the three forms of the log body, and each is taken', async () => {
    const schema = doc.paths['/v1/request/log'].post.requestBody.content['application/json'].schema
    // Each form a named schema of its own, which generators keep apart.
    expect(schema).toEqual({
      oneOf: ['LogEvent', 'LogEventList', 'LogEventBatch'].map((name) => ({
        $ref: `#/components/schemas/${name}`,
      })),
    })
    const check = validatorFor(doc)
    const event = { model: 'gpt-4o-mini', request: { messages: [] }, response: { choices: [] } }
    const forms = [event, [event, event], { events: [event] }]
    for (const body of forms) {
      expect(check(schema, body), JSON.stringify(body)).toEqual([])
      const res = await callApi(tally.url, 'POST', '/v1/request/log', { as: org, body })
      expect(res.status, JSON.stringify(res)).toBe(201)
    }
    expect(check(schema, { events: [] })).not.toEqual([])
    expect(check(schema, { nope: 1 })).not.toEqual([])
  })

  it('asks no API key of the health, metrics, document and blob routes, which answer without one', async () => {
    const open = operations().filter(({ op }) => op.security?.length === 0)
    expect(open.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      'GET /blobs/{key}',
      'GET /healthz',
      'GET /livez',
      'GET /metrics',
      'GET /openapi.json',
      'GET /readyz',
    ])
    for (const url of ['/healthz', '/livez', '/readyz', '/metrics', '/openapi.json']) {
      expect((await fetch(`${tally.url}${url}`)).status, url).toBe(200)
    }
    const blob = await fetch(`${tally.url}/blobs/prompts/x.json?expires=1&signature=00`)
    expect(blob.status).toBe(403)
    // Every other operation takes the organization's key, or the admin key under /admin/v1.
    for (const { path, op } of operations().filter(({ op }) => op.security?.length !== 0)) {
      expect(op.security ?? doc.security, path).toEqual(
        path.startsWith('/admin/') ? [{ admin: [] }] : [{ bearer: [] }],
      )
    }
  })

  const AHEAD_OF_REQUEST = new Set([
    '/v1/request/{id}/score',
    '/v1/request/{id}/feedback',
    '/v1/request/{id}/property',
  ])

  it('declares every status a route answers, each failure with the envelope', async () => {
    const check = validatorFor(doc)
    for (const { method, path, op } of operations()) {
      const statuses = Object.keys(op.responses)
      const where = `${method} ${path}: ${statuses.join(', ')}`
      expect(statuses, where).toEqual(expect.arrayContaining(['400', '500']))
      if (op.security?.length !== 0) expect(statuses, where).toEqual(expect.arrayContaining(['401', '429']))
      if (op.requestBody) expect(statuses, where).toEqual(expect.arrayContaining(['413', '415']))
      // A path naming something that may not exist answers 404 for it; a score, feedback or
      // property of a request is taken before the request is stored (docs/scores.md), so its
      // request id is never a 404.
      if (path.includes('{') && !AHEAD_OF_REQUEST.has(path)) expect(statuses, where).toContain('404')
      if (AHEAD_OF_REQUEST.has(path)) expect(statuses, where).not.toContain('404')
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const schema = op.responses[status].content['application/json'].schema
        if (path !== '/readyz')
          expect(schema, `${where}: ${status}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' })
      }
    }
    // What the framework answers on its own, as declared: a bad query string on a public route,
    // a body that is not JSON, a body too large, no key, a member key on an admin-only route.
    const member = await callApi(tally.url, 'POST', '/v1/api-keys', { as: org, body: { name: 'member' } })
    const answers: [string, string, Response][] = [
      ['GET', '/healthz', await fetch(`${tally.url}/healthz?x=%00`)],
      [
        'POST',
        '/v1/prompt-2025/query',
        await fetch(`${tally.url}/v1/prompt-2025/query`, {
          method: 'POST',
          headers: { ...org.headers, 'content-type': 'application/xml' },
          body: '<x/>',
        }),
      ],
      [
        'POST',
        '/v1/session/query',
        await fetch(`${tally.url}/v1/session/query`, {
          method: 'POST',
          headers: { ...org.headers, 'content-type': 'application/json' },
          body: JSON.stringify({ search: 'x'.repeat(1024 * 1024) }),
        }),
      ],
      ['GET', '/v1/webhooks', await fetch(`${tally.url}/v1/webhooks`)],
      [
        'DELETE',
        '/v1/api-keys/{id}',
        await fetch(`${tally.url}/v1/api-keys/${randomUUID()}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${member.data.api_key}` },
        }),
      ],
    ]
    expect(answers.map(([, , res]) => res.status)).toEqual([400, 415, 413, 401, 403])
    for (const [method, path, res] of answers) {
      expect(
        check(responseSchema(doc, method, path, res.status), await res.json()),
        `${method} ${path}`,
      ).toEqual([])
    }
  })

  it('shows an example on every operation: parameters, body and answer, each fitting its schema', () => {
    const check = validatorFor(doc)
    const missing: string[] = []
    const wrong: string[] = []
    const delivery =
      doc.paths['/v1/webhooks'].post.callbacks.requestCompleted['{$request.body#/destination}'].post
    const all = [...operations(), { method: 'POST', path: '(webhook delivery)', op: delivery }]
    for (const { method, path, op } of all) {
      const where = `${method} ${path}`
      for (const p of op.parameters ?? []) {
        if (p.example === undefined) {
          if (p.required) missing.push(`${where}: parameter ${p.name}`)
        } else wrong.push(...check(p.schema, p.example).map((e) => `${where}: parameter ${p.name} ${e}`))
      }
      const body = op.requestBody && exampleHolder(op.requestBody.content)
      if (body?.example === undefined) {
        if (op.requestBody) missing.push(`${where}: body`)
      } else wrong.push(...check(body.schema, body.example).map((e) => `${where}: body ${e}`))
      const success = op.responses['200'] ?? op.responses['201'] ?? op.responses['202']
      if (!success) continue // the delivery: any 2xx
      const answer = exampleHolder(success.content)
      if (answer?.example === undefined) missing.push(`${where}: answer`)
      else wrong.push(...check(answer.schema, answer.example).map((e) => `${where}: answer ${e}`))
    }
    expect(missing).toEqual([])
    expect(wrong).toEqual([])
  })

  it('takes every example request as it stands: each succeeds, or finds nothing where it names an id', async () => {
    const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i
    const refused: string[] = []
    let succeeded = 0
    for (const { method, path, op } of operations()) {
      const values = (where: string) =>
        (op.parameters ?? []).filter((p: { in: string }) => p.in === where) as {
          name: string
          example?: string | number
        }[]
      let url = path
      for (const p of values('path')) url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)))
      const query = new URLSearchParams(
        values('query')
          .filter((p) => p.example !== undefined)
          .map((p): [string, string] => [p.name, String(p.example)]),
      )
      const body = op.requestBody && exampleHolder(op.requestBody.content)?.example
      const key = path.startsWith('/admin/')
        ? `Bearer ${tally.config.TALLY_ADMIN_API_KEY}`
        : org.headers.authorization
      const res = await fetch(`${tally.url}${url}${query.size > 0 ? `?${query}` : ''}`, {
        method,
        headers: {
          ...(op.security?.length === 0 ? {} : { authorization: key }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      // An example that names an id (in its path or body) names nothing here: 404 is its answer,
      // and 403 the blob link's (its signature is not this Tally's). Every other example succeeds.
      const namesAnId = values('path').length > 0 || UUID.test(JSON.stringify(body ?? null))
      const fine = res.ok || (namesAnId && [403, 404].includes(res.status))
      if (!fine) refused.push(`${method} ${url}: ${res.status} ${await res.text()}`)
      else await res.arrayBuffer()
      if (res.ok) succeeded += 1
    }
    expect(refused).toEqual([])
    expect(succeeded).toBeGreaterThanOrEqual(30)
  })

  it('describes the webhook deliveries: payload and signature headers as sent', () => {
    // A callback of createWebhook, to the webhook's destination (generators read top-level
    // `webhooks` as one more API of the management tag).
    expect(doc.webhooks).toBeUndefined()
    const delivery =
      doc.paths['/v1/webhooks'].post.callbacks.requestCompleted['{$request.body#/destination}'].post
    expect(delivery.tags).toEqual(['webhook-deliveries'])
    const signed = signatureHeaders({
      id: randomUUID(),
      timestamp: 1_790_000_000,
      body: '{}',
      keys: [generateHmacKey(), generateHmacKey()],
    })
    const headers = delivery.parameters.filter((p: { in: string }) => p.in === 'header')
    expect(headers.map((h: { name: string }) => h.name.toLowerCase()).sort()).toEqual(
      Object.keys(signed).sort(),
    )
    const check = validatorFor(doc)
    for (const header of headers) {
      expect(check(header.schema, signed[header.name.toLowerCase()]), header.name).toEqual([])
    }
    const schema = delivery.requestBody.content['application/json'].schema
    expect(schema).toEqual({ $ref: '#/components/schemas/WebhookPayload' })
    const event = { ...testEvent(randomUUID(), randomUUID(), new Date()), properties: { env: 'prod' } }
    for (const includeData of [true, false]) {
      const payload = JSON.parse(buildPayload(event, includeData, 'request.completed').toString())
      expect(check(schema, payload), `includeData ${includeData}`).toEqual([])
      expect('request' in payload).toBe(includeData)
    }
    expect(check(schema, JSON.parse(buildPayload(event, true, 'webhook.test').toString()))).toEqual([])
    expect(Object.keys(delivery.responses).sort()).toEqual(['2XX', '410', 'default'])
  })
})
