import { callApi } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally, type TestTallyOptions } from '../support/harness.ts'

/** POST /v1/sql/query as `org`. */
export const sqlQuery = (tally: TestTally, org: TestOrg, body: unknown) =>
  callApi(tally.app, 'POST', '/v1/sql/query', { as: org, body })

/** What only the second organization's rows carry: no answer to the first may hold any of it. */
export const SECRET = {
  model: 'secret-model-b',
  user: 'secret-user-b',
  session: 'secret-session-b',
  body: 'TOP-SECRET-B',
} as const

/**
 * Logs the two organizations' requests through the API (in-process intake: durable and queryable
 * once it answers 201). The first: three requests, two in session s-1, one in s-2.
 */
async function logBothOrganizations(tally: TestTally, a: TestOrg, b: TestOrg): Promise<void> {
  const log = async (org: TestOrg, events: unknown[]) => {
    const res = await callApi(tally.app, 'POST', '/v1/request/log', { as: org, body: { events } })
    if (res.status !== 201) throw new Error(`intake answered ${res.status}: ${res.error}`)
  }
  await log(a, [
    event('gpt-4o-mini', 's-1', 'user-a', '2026-11-01T10:00:00.000Z', 100, 20, 0.5),
    event('gpt-4o-mini', 's-1', 'user-a', '2026-11-01T10:01:00.000Z', 200, 40, 0.25),
    event('claude-sonnet-4', 's-2', 'user-a2', '2026-11-02T09:00:00.000Z', 300, 60, 1),
  ])
  await log(b, [
    {
      ...event(SECRET.model, SECRET.session, SECRET.user, '2026-11-01T10:00:30.000Z', 999, 999, 7),
      request: { model: SECRET.model, messages: [{ role: 'user', content: SECRET.body }] },
    },
    event(SECRET.model, SECRET.session, SECRET.user, '2026-11-01T11:00:00.000Z', 1, 1, 9),
  ])
}

function event(
  model: string,
  session: string,
  user: string,
  createdAt: string,
  prompt: number,
  completion: number,
  cost: number,
) {
  return {
    model,
    session_id: session,
    user_id: user,
    created_at: createdAt,
    latency_ms: 500,
    prompt_tokens: prompt,
    completion_tokens: completion,
    cost_usd: cost,
    request: { model, messages: [{ role: 'user', content: 'hello' }] },
    response: { id: 'x', choices: [] },
  }
}

/** A Tally with two organizations whose requests are logged (see logBothOrganizations). */
export async function startWithTwoOrganizations(
  options: TestTallyOptions = {},
): Promise<{ tally: TestTally; a: TestOrg; b: TestOrg }> {
  const tally = await startTestTally(options)
  const a = await tally.newOrg()
  const b = await tally.newOrg()
  await logBothOrganizations(tally, a, b)
  return { tally, a, b }
}
