import type { TestOrg, TestTally } from '../support/harness.ts'

/** A small JSON client over app.inject for the pipeline suites. */
export function apiClient(tally: TestTally) {
  async function call(method: 'GET' | 'POST', url: string, org: TestOrg, body?: unknown, headers = {}) {
    const res = await tally.app.inject({
      method,
      url,
      headers: { ...org.headers, ...headers },
      ...(body === undefined ? {} : { payload: body as object }),
    })
    // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field with expect
    return { status: res.statusCode, body: res.json() as { data: any; error: string | null } }
  }
  return {
    call,
    log: (org: TestOrg, body: unknown) => call('POST', '/v1/request/log', org, body),
    query: (org: TestOrg, body: unknown = {}) => call('POST', '/v1/request/query', org, body),
    get: (org: TestOrg, id: string) => call('GET', `/v1/request/${id}`, org),
    /** Rows in the table for an organization, read the way every query reads it (FINAL). */
    async count(org: TestOrg): Promise<number> {
      const rs = await tally.clickhouse.query({
        query: 'SELECT count() AS n FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}',
        query_params: { org: org.organizationId },
        format: 'JSONEachRow',
      })
      return Number((await rs.json<{ n: number }>())[0]?.n)
    },
    /** Raw rows, duplicates included (no FINAL): what a careless reader would see. */
    async rawCount(org: TestOrg): Promise<number> {
      const rs = await tally.clickhouse.query({
        query: 'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID}',
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
