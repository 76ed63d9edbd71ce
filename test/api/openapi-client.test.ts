import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import createClient from 'openapi-fetch'
import { generateTypes } from 'tally-openapi-typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { type OpenApiDocument, responseSchema, validatorFor } from '../support/openapi.ts'
import { waitFor } from '../support/wait.ts'

// A client generated the way a user of Tally would make one: openapi-typescript turns
// /openapi.json into types, openapi-fetch calls the API with them (test/api/openapi-client/calls.ts).
const root = resolve(import.meta.dirname, '../..')

let tally: TestTally
let org: TestOrg
let doc: OpenApiDocument
let dir: string
beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
  doc = await (await fetch(`${tally.url}/openapi.json`)).json()
  dir = mkdtempSync(join(tmpdir(), 'tally-client-'))
  writeFileSync(join(dir, 'tally-api.ts'), await generateTypes(doc))
  cpSync(join(import.meta.dirname, 'openapi-client/calls.ts'), join(dir, 'calls.ts'))
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  const compilerOptions = {
    target: 'es2024',
    lib: ['es2024', 'dom'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: [],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['calls.ts'] }))
})
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  await tally?.close()
})

describe('a client generated from /openapi.json', () => {
  it('type-checks calls against the generated types, which refuse wrong calls', async () => {
    await promisify(execFile)(join(root, 'node_modules/.bin/tsc'), ['-p', dir]).catch(
      (err: { stdout: string; stderr: string }) => {
        throw new Error(`tsc on the generated client failed:\n${err.stdout}${err.stderr}`)
      },
    )
  }, 60_000)

  it('calls the API, and every answer matches the schema the document declares for it', async () => {
    const calls = await import(pathToFileURL(join(dir, 'calls.ts')).href)
    const client = createClient({ baseUrl: tally.url, headers: org.headers })
    const check = validatorFor(doc)
    /** The envelope of an answer, checked against the document's schema for its status. */
    const answer = async (
      method: string,
      path: string,
      status: number,
      call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
    ) => {
      const { data, error, response } = await call
      const body = data ?? error
      expect(response.status, `${method} ${path}: ${JSON.stringify(body)}`).toBe(status)
      expect(check(responseSchema(doc, method, path, status), body), `${method} ${path}`).toEqual([])
      // biome-ignore lint/suspicious/noExplicitAny: read field by field below
      return body as any
    }

    const name = `client-${randomUUID()}`
    const created = await answer('POST', '/v1/prompt-2025', 201, calls.createPrompt(client, name))
    const found = await answer('POST', '/v1/prompt-2025/query', 200, calls.queryPrompts(client, name))
    expect(found.data.map((p: { id: string }) => p.id)).toEqual([created.data.id])
    await answer('GET', '/v1/prompt-2025/id/{promptId}', 200, calls.getPrompt(client, created.data.id))
    const production = await answer(
      'POST',
      '/v2/prompt-2025/query/production-version',
      200,
      calls.getProductionVersion(client, created.data.id),
    )
    expect(production.data.prompt_body.temperature).toBe(0.2)

    const since = Date.now() - 60_000
    const sessionId = `session-${randomUUID()}`
    const logged = await answer('POST', '/v1/request/log', 201, calls.logRequest(client, sessionId))
    const [requestId] = logged.data.request_ids
    const record = await waitFor(
      async () => {
        const { response } = await calls.getRequest(client, requestId)
        return response.status === 200
      },
      { what: 'the logged request' },
    ).then(() => answer('GET', '/v1/request/{id}', 200, calls.getRequest(client, requestId)))
    expect(record.data).toMatchObject({ request_id: requestId, session_id: sessionId, total_tokens: 8 })
    const queried = await answer('POST', '/v1/request/query', 200, calls.queryRequests(client, requestId))
    expect(queried.data.map((r: { request_id: string }) => r.request_id)).toEqual([requestId])
    const sessions = await answer(
      'POST',
      '/v1/session/query',
      200,
      calls.querySessions(client, sessionId, since),
    )
    expect(sessions.data).toMatchObject([{ session_id: sessionId, total_requests: 1, user_ids: ['user-1'] }])

    const keys = await answer('GET', '/v1/api-keys', 200, calls.listApiKeys(client))
    expect(keys.data).toHaveLength(1)

    // In an organization that logs nothing: the destination is never sent anything.
    const quiet = await tally.newOrg()
    const quietClient = createClient({ baseUrl: tally.url, headers: quiet.headers })
    const webhook = await answer('POST', '/v1/webhooks', 201, calls.createWebhook(quietClient))
    expect(webhook.data).toMatchObject({ destination: 'https://hooks.example.com/tally', includeData: false })
    const webhooks = await answer('GET', '/v1/webhooks', 200, calls.listWebhooks(quietClient))
    expect(webhooks.data.map((w: { id: string }) => w.id)).toEqual([webhook.data.id])

    const bad = await answer('GET', '/v1/request/{id}', 400, calls.getRequest(client, 'not-a-uuid'))
    expect(bad).toEqual({ data: null, error: 'params.id: must be a UUID' })
    await answer('GET', '/v1/prompt-2025/id/{promptId}', 404, calls.getPrompt(client, randomUUID()))
  })
})
