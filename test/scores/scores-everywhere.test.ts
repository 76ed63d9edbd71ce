import { describe, expect, it } from 'vitest'
import { download, exportWindow, WINDOW } from '../exports/support.ts'
import { sqlQuery } from '../sql/fixtures.ts'
import { apiAs } from '../support/api.ts'
import { waitFor } from '../support/wait.ts'
import { createWebhook } from '../webhooks/support/api.ts'
import { webhookSuite } from '../webhooks/support/suite.ts'

// The "done when", end to end through the API: a score set with Helicone's shape filters
// sessions at once and shows in the governed SQL, in an export (whose filter names it) and in a
// signed webhook delivery; a property set after the fact likewise.

const suite = webhookSuite({ TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })

describe('a score set through the API', () => {
  it('filters sessions, and shows in SQL, exports and webhooks', async () => {
    const org = await suite.tally.newOrg()
    const api = apiAs(suite.tally.app, org)
    const hook = await createWebhook(suite.tally, org, suite.receiver.url, {
      config: { events: ['score.created', 'feedback.created'] },
    })
    const at = Date.parse(WINDOW.from) + 3_600_000
    const logged = await api.post('/v1/request/log', {
      model: 'gpt-4o-mini',
      created_at: new Date(at).toISOString(),
      session_id: 'ticket-9',
      request: { messages: [] },
      response: {},
    })
    expect(logged.status).toBe(201)
    const id = logged.data.request_ids[0] as string

    expect((await api.post(`/v1/request/${id}/score`, { scores: { helpfulness: 0.9 } })).status).toBe(200)
    expect((await api.post(`/v1/request/${id}/feedback`, { rating: true })).status).toBe(200)
    expect((await api.put(`/v1/request/${id}/property`, { key: 'reviewed', value: 'yes' })).status).toBe(200)

    // Sessions: at once (the in-process transport answers once written).
    const sessions = await api.post('/v1/session/query', {
      timeFilter: { startTimeUnixMs: at - 60_000, endTimeUnixMs: at + 60_000 },
      timezoneDifference: 0,
      filter: { sessions_request_response_rmt: { avg_score: { helpfulness: { gte: 0.7 } } } },
    })
    expect(sessions.data.map((s: { session_id: string }) => s.session_id)).toEqual(['ticket-9'])

    // Governed SQL.
    const sql = await sqlQuery(suite.tally, org, {
      sql: 'SELECT name, value, session_id FROM scores WHERE request_id = {id:UUID} ORDER BY name',
      params: { id },
    })
    expect(sql.error).toBeNull()
    expect(sql.data.rows).toEqual([
      { name: 'feedback', value: 1, session_id: 'ticket-9' },
      { name: 'helpfulness', value: 0.9, session_id: 'ticket-9' },
    ])

    // An export whose filter names the score and the property set after the fact.
    const done = await exportWindow(suite.tally, org, {
      format: 'jsonl',
      filter: {
        left: { scores: { helpfulness: { gte: 0.5 } } },
        operator: 'and',
        right: { properties: { reviewed: { equals: 'yes' } } },
      },
    })
    const rows = (await Promise.all(done.download.files.map((f: { url: string }) => download(f.url))))
      .flatMap((file) => file.body.toString().split('\n').filter(Boolean))
      .map((line) => JSON.parse(line))
    expect(rows.map((r) => [r.request_id, r.scores, r.properties])).toEqual([
      [id, { feedback: 1, helpfulness: 0.9 }, { reviewed: 'yes' }],
    ])

    // Webhooks: one delivery of each kind, signed.
    await waitFor(() => suite.receiver.to(hook.path).length === 2, { what: 'the two score deliveries' })
    const payloads = suite.receiver
      .to(hook.path)
      .map((r) => JSON.parse(r.body.toString('utf8')))
      .sort((a, b) => a.metadata.event.localeCompare(b.metadata.event))
    expect(
      payloads.map((p) => [
        p.metadata.event,
        p.metadata.requestId,
        p.metadata.sessionId,
        p.score.name,
        p.score.value,
      ]),
    ).toEqual([
      ['feedback.created', id, 'ticket-9', 'feedback', true],
      ['score.created', id, 'ticket-9', 'helpfulness', 0.9],
    ])
  })
})
