import { callApi } from '../support/api.ts'
import type { TestOrg, TestTally } from '../support/harness.ts'

/** The request API of one Tally, and its rows in ClickHouse. */
export function requestApi(tally: TestTally) {
  return {
    log: (org: TestOrg, body: unknown) => callApi(tally.app, 'POST', '/v1/request/log', { as: org, body }),
    query: (org: TestOrg, body: unknown = {}) =>
      callApi(tally.app, 'POST', '/v1/request/query', { as: org, body }),
    get: (org: TestOrg, id: string) => callApi(tally.app, 'GET', `/v1/request/${id}`, { as: org }),
    /** Rows in the table for an organization, read the way every query reads it (FINAL). */
    async count(org: TestOrg): Promise<number> {
      const rs = await tally.clickhouse.query({
        query: 'SELECT count() AS n FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}',
        query_params: { org: org.organizationId },
        format: 'JSONEachRow',
      })
      return Number((await rs.json<{ n: number }>())[0]?.n)
    },
  }
}

/** An OpenAI chat completion as the API answers it. */
export function chatCompletion(model = 'gpt-4o-mini', prompt = 10, completion = 20) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  }
}
