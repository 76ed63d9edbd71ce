import { randomUUID } from 'node:crypto'
import type { TestOrg, TestTally } from '../support/harness.ts'

export interface Answer {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the API answered
  data: any
  error: string | null
}

/** The prompt API as one organization sees it, through the app's own request handling. */
export function promptClient(tally: TestTally, org: TestOrg) {
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await tally.app.inject({
      method,
      url,
      headers: org.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    })
    const body = res.json() as { data: unknown; error: string | null }
    return { status: res.statusCode, data: body.data, error: body.error } as Answer
  }
  return {
    post: (url: string, body: unknown) => call('POST', url, body),
    patch: (url: string, body: unknown) => call('PATCH', url, body),
    get: (url: string) => call('GET', url),
    delete: (url: string) => call('DELETE', url),
    /** Creates a prompt and returns its id and first version id; fails the test if it cannot. */
    async create(name = `prompt-${randomUUID().slice(0, 8)}`, tags: string[] = [], body = sampleBody()) {
      const res = await call('POST', '/v1/prompt-2025', { name, tags, promptBody: body })
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.error}`)
      return res.data as { id: string; versionId: string }
    },
    /** A new version of `promptId` based on `baseId`; returns its id. */
    async version(
      promptId: string,
      baseId: string,
      major: boolean,
      body = sampleBody(),
      environment?: string,
    ) {
      const res = await call('POST', '/v1/prompt-2025/update', {
        promptId,
        promptVersionId: baseId,
        newMajorVersion: major,
        commitMessage: major ? 'rewrite' : 'wording',
        promptBody: body,
        ...(environment ? { environment } : {}),
      })
      if (res.status !== 201) throw new Error(`update failed: ${res.status} ${res.error}`)
      return (res.data as { id: string }).id
    },
  }
}

export type PromptClient = ReturnType<typeof promptClient>

export function sampleBody(overrides: Record<string, unknown> = {}) {
  return {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You answer questions about {{hc:topic:string}}.' },
      { role: 'user', content: 'Hello' },
    ],
    temperature: 0.2,
    max_tokens: 256,
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    top_p: 0.9,
    ...overrides,
  }
}

/** Polls `probe` until it returns true or the deadline passes. */
export async function eventually(probe: () => Promise<boolean>, what: string, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}
