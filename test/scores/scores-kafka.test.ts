import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kafkaConnection } from '../../services/shared/events/kafka.ts'
import { apiAs } from '../support/api.ts'
import { engines, startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { topicEnds } from '../support/kafka.ts'
import { waitFor } from '../support/wait.ts'

// Scores and properties through real Kafka into ClickHouse: answered once Kafka holds them,
// queryable within seconds, applied to a request that arrives after them.

const AT = Date.parse('2026-11-21T10:00:00.000Z')
const WINDOW = { startTimeUnixMs: AT - 3_600_000, endTimeUnixMs: AT + 3_600_000 }

describe.skipIf(!engines().kafkaBrokers)('scores through real Kafka', () => {
  let tally: TestTally
  let org: TestOrg
  let api: ReturnType<typeof apiAs>

  beforeAll(async () => {
    tally = await startTestTally({ kafka: true })
    org = await tally.newOrg()
    api = apiAs(tally.app, org)
  })
  afterAll(() => tally?.close())

  const log = async (fields: Record<string, unknown>) => {
    const res = await api.post('/v1/request/log', {
      model: 'gpt-4o-mini',
      created_at: new Date(AT).toISOString(),
      request: {},
      response: {},
      ...fields,
    })
    expect(res.status, res.error ?? '').toBe(201)
    return res.data.request_ids[0] as string
  }
  const sessions = async (filter: unknown) => {
    const res = await api.post('/v1/session/query', { timeFilter: WINDOW, timezoneDifference: 0, filter })
    expect(res.status, res.error ?? '').toBe(200)
    return res.data.map((s: { session_id: string }) => s.session_id)
  }

  it('a score set through the API filters sessions within seconds', async () => {
    const id = await log({ session_id: 'kafka-graded' })
    await waitFor(async () => (await sessions('all')).includes('kafka-graded'), {
      what: 'the request in ClickHouse',
      timeoutMs: 30_000,
    })
    const started = Date.now()
    const res = await api.post(`/v1/request/${id}/score`, { scores: { helpfulness: 0.9 } })
    expect(res.status).toBe(200)
    const filter = { sessions_request_response_rmt: { avg_score: { helpfulness: { gte: 0.7 } } } }
    await waitFor(async () => (await sessions(filter)).includes('kafka-graded'), {
      what: 'the score filtering the session',
      timeoutMs: 30_000,
    })
    // Seconds, not minutes: the pipeline's own latency.
    expect(Date.now() - started).toBeLessThan(15_000)
  })

  it('a score sent before its request applies when the request arrives; a property too', async () => {
    const id = randomUUID()
    expect((await api.post(`/v1/request/${id}/feedback`, { rating: true })).status).toBe(200)
    expect((await api.put(`/v1/request/${id}/property`, { key: 'reviewed', value: 'yes' })).status).toBe(200)
    await waitFor(async () => (await api.get(`/v1/scores?request_id=${id}`)).data.length === 1, {
      what: 'the score stored',
      timeoutMs: 30_000,
    })
    expect((await api.get(`/v1/scores?request_id=${id}`)).data[0].status).toBe('pending')
    await log({ request_id: id, session_id: 'kafka-late' })
    await waitFor(async () => (await sessions({ feedback: { equals: true } })).includes('kafka-late'), {
      what: 'the early feedback filtering the late request’s session',
      timeoutMs: 30_000,
    })
    expect(await sessions({ properties: { reviewed: { equals: 'yes' } } })).toEqual(['kafka-late'])
    expect((await api.get(`/v1/scores?request_id=${id}`)).data[0].status).toBe('applied')
  })

  it('no annotation event reaches the dead-letter topic', async () => {
    const kafka = kafkaConnection(tally.config, pino({ level: 'silent' }))
    // The earlier tests' events were consumed (they are queryable): a letter would be there by now.
    const ends = await topicEnds(kafka, tally.config.TALLY_DLQ_TOPIC)
    expect(ends.reduce((sum, end) => sum + end, 0)).toBe(0)
  })
})
