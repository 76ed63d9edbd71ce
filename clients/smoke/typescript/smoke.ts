/**
 * Smoke test of the typescript-fetch client generated from Tally's OpenAPI document, run by
 * `npm run clients:check` against a started Tally (TALLY_URL, TALLY_API_KEY): create a prompt
 * (its version 1.0), log a request, find its session, create a webhook and rotate its key, and
 * create an export. Throws at the first step that does not answer as it should.
 */
import {
  Configuration,
  ExportsApi,
  type FilterNode,
  PromptsApi,
  RequestsApi,
  SessionsApi,
  WebhooksApi,
} from './index'

const { TALLY_URL = '', TALLY_API_KEY = '' } = process.env
const config = new Configuration({ basePath: TALLY_URL, accessToken: TALLY_API_KEY })
const run = Math.random().toString(36).slice(2, 10)

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`smoke (typescript-fetch): ${what}`)
  console.log(`typescript-fetch: ${what}`)
}

async function main(): Promise<void> {
  const prompt = await new PromptsApi(config).createPrompt({
    createPromptRequest: {
      name: `smoke-typescript-${run}`,
      promptBody: { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Say hi.' }] },
    },
  })
  check(prompt.error === null && prompt.data.versionId.length > 0, 'created a prompt and its version 1.0')

  const sessionId = `smoke-typescript-${run}`
  const logged = await new RequestsApi(config).logRequests({
    logRequestsRequest: {
      model: 'gpt-4o-mini',
      provider: 'openai',
      sessionId,
      request: { messages: [{ role: 'user', content: 'Hi' }] },
      response: { choices: [] },
    },
  })
  check(logged.data.requestIds.length === 1, 'logged a request')

  const sessions = new SessionsApi(config)
  const deadline = Date.now() + 30_000
  for (;;) {
    const found = await sessions.querySessions({
      querySessionsRequest: {
        timeFilter: { startTimeUnixMs: 0, endTimeUnixMs: Date.now() + 60_000 },
        timezoneDifference: 0,
        search: sessionId,
        // typescript-fetch merges FilterNode's alternatives into one interface that requires a
        // branch's left, operator and right; {} ("everything") is one of the alternatives.
        filter: {} as FilterNode,
      },
    })
    if (found.data.some((s) => s.sessionId === sessionId)) break
    if (Date.now() > deadline)
      throw new Error(`smoke (typescript-fetch): session ${sessionId} not found in 30 s`)
    await new Promise((r) => setTimeout(r, 200))
  }
  check(true, 'found the session of the request')

  const webhooks = new WebhooksApi(config)
  const created = await webhooks.createWebhook({
    createWebhookRequest: { destination: 'https://127.0.0.1:9/smoke' },
  })
  const rotated = await webhooks.rotateWebhookKey({ id: created.data.id })
  check(
    rotated.data.hmacKey.length > 0 && rotated.data.hmacKey !== created.data.hmacKey,
    'created a webhook and rotated its key',
  )

  const today = new Date(new Date().toISOString().slice(0, 10))
  const exported = await new ExportsApi(config).createExport({
    createExportRequest: {
      from: new Date(today.getTime() - 86_400_000).toISOString(),
      to: today.toISOString(),
      format: 'jsonl',
    },
  })
  check(exported.data.id.length > 0, 'created an export')
}

main().catch(async (err: unknown) => {
  const response = (err as { response?: Response }).response
  console.error(response ? `${response.status} ${response.url}: ${await response.text()}` : err)
  process.exit(1)
})
