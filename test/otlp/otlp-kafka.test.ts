import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import { engines, startTestTally, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { otelApp } from './client.ts'

// The OTLP intake on the distributed path: the 200 comes after Kafka acknowledged the events
// (acks=all); the ingest consumer then writes them.
describe.skipIf(!engines().kafkaBrokers)('OTLP intake through Kafka', () => {
  let tally: TestTally
  beforeAll(async () => {
    tally = await startTestTally({ kafka: true })
  })
  afterAll(() => tally?.close())

  it('exports land as rows once the ingest consumer has written them', async () => {
    const org = await tally.newOrg()
    const app = otelApp({
      url: `${tally.url}/v1/traces`,
      headers: org.headers,
      encoding: 'protobuf',
      batch: true,
    })
    for (let i = 0; i < 20; i++) {
      app
        .span('chat', {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.usage.input_tokens': 100 + i,
          'gen_ai.usage.output_tokens': 10,
          'gen_ai.conversation.id': 'kafka-session',
        })
        .end()
    }
    await app.flush()
    await app.close()
    const rows = await waitFor(
      async () => {
        const res = await apiAs(tally.app, org).post('/v1/request/query', { limit: 100 })
        return res.data?.length === 20 && res.data
      },
      { what: '20 rows written through Kafka', timeoutMs: 30_000 },
    )
    const tokens = rows
      .map((r: { prompt_tokens: number }) => r.prompt_tokens)
      .sort((a: number, b: number) => a - b)
    expect(tokens).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i))
    const session = await apiAs(tally.app, org).get('/v1/session/kafka-session')
    expect(session.data.total_requests).toBe(20)
  })
})
