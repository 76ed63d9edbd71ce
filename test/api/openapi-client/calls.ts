// A client of Tally written against the types openapi-typescript generates from /openapi.json.
// test/api/openapi-client.test.ts puts this file beside the generated tally-api.ts, type-checks
// both with tsc and then runs the calls: tally-api.ts exists only there, so the project's own
// typecheck leaves this file out.
import type { Client } from 'openapi-fetch'
import type { paths } from './tally-api.ts'

export type Tally = Client<paths>

export const createPrompt = (tally: Tally, name: string) =>
  tally.POST('/v1/prompt-2025', {
    body: {
      name,
      tags: ['client'],
      promptBody: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], temperature: 0.2 },
    },
  })

export const queryPrompts = (tally: Tally, search: string) =>
  tally.POST('/v1/prompt-2025/query', { body: { search, tagsFilter: [], page: 0, pageSize: 10 } })

export const getPrompt = (tally: Tally, promptId: string) =>
  tally.GET('/v1/prompt-2025/id/{promptId}', { params: { path: { promptId } } })

export const getProductionVersion = (tally: Tally, promptId: string) =>
  tally.POST('/v2/prompt-2025/query/production-version', { body: { promptId } })

/** One event, as it is: not in an array, not in {events}. */
export const logRequest = (tally: Tally, sessionId: string) =>
  tally.POST('/v1/request/log', {
    body: {
      model: 'gpt-4o-mini',
      session_id: sessionId,
      session_name: 'generated client',
      user_id: 'user-1',
      request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
      response: { choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } },
      latency_ms: 120,
      properties: { via: 'openapi-fetch' },
    },
  })

export const getRequest = (tally: Tally, id: string) =>
  tally.GET('/v1/request/{id}', { params: { path: { id } } })

export const queryRequests = (tally: Tally, id: string) =>
  tally.POST('/v1/request/query', {
    body: { filter: { request_response_rmt: { request_id: { equals: id } } }, includeBody: true },
  })

export const querySessions = (tally: Tally, sessionId: string, since: number) =>
  tally.POST('/v1/session/query', {
    body: {
      search: sessionId,
      timeFilter: { startTimeUnixMs: since, endTimeUnixMs: since + 3_600_000 },
      timezoneDifference: -120,
      filter: { properties: { via: { equals: 'openapi-fetch' } } },
    },
  })

export const listApiKeys = (tally: Tally) => tally.GET('/v1/api-keys')

export const createWebhook = (tally: Tally) =>
  tally.POST('/v1/webhooks', {
    body: { destination: 'https://hooks.example.com/tally', config: { sampleRate: 50 }, includeData: false },
  })

export const listWebhooks = (tally: Tally) => tally.GET('/v1/webhooks')

/** Never called: each call must fail to compile, or the generated types say too little. */
export function misuses(tally: Tally) {
  // @ts-expect-error there is no such route
  void tally.GET('/v1/nope')
  // @ts-expect-error model is a string
  void tally.POST('/v1/request/log', { body: { model: 1 } })
  // @ts-expect-error pageSize is 10, 25, 50 or 100
  void tally.POST('/v1/prompt-2025/query', { body: { search: '', tagsFilter: [], page: 0, pageSize: 7 } })
  const timeFilter = { startTimeUnixMs: 0, endTimeUnixMs: 1 }
  // @ts-expect-error a session query needs its filter
  void tally.POST('/v1/session/query', { body: { timeFilter, timezoneDifference: 0 } })
  const destination = 'https://hooks.example.com/x'
  // @ts-expect-error sampleRate is a number
  void tally.POST('/v1/webhooks', { body: { destination, config: { sampleRate: '50' } } })
  // @ts-expect-error the parameter is promptId
  void tally.GET('/v1/prompt-2025/id/{promptId}', { params: { path: { id: 'x' } } })
  // @ts-expect-error the path needs its id
  void tally.GET('/v1/request/{id}')
}
