import { randomUUID } from 'node:crypto'
import { apiAs } from '../support/api.ts'
import type { TestOrg, TestTally } from '../support/harness.ts'

/** The prompt API as one organization sees it, through the app's own request handling. */
export function promptClient(tally: TestTally, org: TestOrg) {
  const api = apiAs(tally.app, org)
  return {
    ...api,
    /** Creates a prompt and returns its id and first version id; fails the test if it cannot. */
    async create(name = `prompt-${randomUUID().slice(0, 8)}`, tags: string[] = [], body = sampleBody()) {
      const res = await api.post('/v1/prompt-2025', { name, tags, promptBody: body })
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
      const res = await api.post('/v1/prompt-2025/update', {
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
