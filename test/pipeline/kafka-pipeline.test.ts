import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { createIngestHandler } from '../../services/ingest/handler.ts'
import { createDeletedOrganizations } from '../../services/shared/deleted-organizations.ts'
import { loadRequestCodec } from '../../services/shared/events/codec.ts'
import type { EventHandler } from '../../services/shared/events/handler.ts'
import { runKafkaConsumer } from '../../services/shared/events/kafka.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { engines, type TestOrg } from '../support/harness.ts'
import { committedOffsets, createTopic, produceRaw, topicEnds } from '../support/kafka.ts'
import { metric } from '../support/metrics.ts'
import { waitFor } from '../support/wait.ts'
import { chatCompletion } from './client.ts'
import { kafkaSuite } from './kafka-suite.ts'

const log = pino({ level: 'silent' })
const LONG = { timeoutMs: 60_000, intervalMs: 100 }
describe.skipIf(!engines().kafkaBrokers)('request pipeline through real Kafka', () => {
  const suite = kafkaSuite()

  /** What a further ingest process's handler looks deletions up in; closed after the file. */
  async function deletedOrganizations() {
    const deletions = await createDeletedOrganizations(suite.tally.sql, log)
    suite.stops.push(() => deletions.close())
    return deletions
  }
  const INGEST = `${suite.groupPrefix}tally-ingest`

  const topic = () => suite.tally.config.TALLY_REQUEST_TOPIC
  const written = (org: TestOrg, n: number) =>
    waitFor(async () => (await suite.api.count(org)) >= n, { ...LONG, what: `${n} rows for the org` })

  const highWatermark = async (t: string) =>
    (await topicEnds(suite.kafka, t)).reduce((sum, end) => sum + end, 0)
  const committed = async (groupId: string, t: string) =>
    [...(await committedOffsets(suite.kafka, groupId, t)).values()].reduce(
      (sum, o) => sum + Math.max(o, 0),
      0,
    )

  it('intake → Kafka → ClickHouse → query: 201 once Kafka holds the events, then they become queryable', async () => {
    const org = await suite.tally.newOrg()
    const events = Array.from({ length: 30 }, (_, i) => ({
      model: i % 2 ? 'gpt-4o' : 'claude-3-5-haiku',
      created_at: Date.UTC(2026, 10, 7, 0, 0, i),
      response: chatCompletion('x', 10, 10),
      properties: { batch: 'e2e' },
    }))
    const res = await suite.api.log(org, events)
    expect(res.status).toBe(201)
    await written(org, 30)
    const q = await suite.api.query(org, {
      filter: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
      limit: 100,
    })
    expect(q.data).toHaveLength(15)
    expect(new Set(res.data.request_ids)).toEqual(
      new Set(
        (await suite.api.query(org, { limit: 100 })).data.map((r: { request_id: string }) => r.request_id),
      ),
    )
  })

  it('redelivery: the same events consumed and written twice leave every count unchanged', async () => {
    const org = await suite.tally.newOrg()
    const ids = (
      await suite.api.log(
        org,
        Array.from({ length: 20 }, () => ({ model: 'gpt-4o', cost_usd: 0.5 })),
      )
    ).data.request_ids as string[]
    await written(org, 20)
    // A second group re-reads the whole topic and writes every event again, as a redelivery would.
    let again = 0
    const ingest = createIngestHandler(
      suite.tally.clickhouse,
      log,
      await deletedOrganizations(),
      await loadRequestCodec(),
    )
    const counting: EventHandler = {
      name: 'redeliver',
      async handle(events) {
        await ingest.handle(events)
        again += events.filter((e) => e.organization_id === org.organizationId).length
      },
    }
    const replay = await runKafkaConsumer({
      kafka: suite.kafka,
      groupId: `redeliver-${randomUUID()}`,
      topic: topic(),
      dlqTopic: suite.tally.config.TALLY_DLQ_TOPIC,
      codec: suite.codec,
      handler: counting,
      log,
    })
    suite.stops.push(() => replay.stop())
    await waitFor(() => again >= 20, { ...LONG, what: 'the org events written a second time' })
    expect(await suite.api.count(org)).toBe(20)
    const q = await suite.api.query(org, { limit: 1000 })
    expect(q.data).toHaveLength(20)
    expect(q.data.reduce((s: number, r: { cost_usd: number }) => s + r.cost_usd, 0)).toBeCloseTo(10, 10)
    expect(new Set(q.data.map((r: { request_id: string }) => r.request_id))).toEqual(new Set(ids))
  })

  it('a poison message goes to the DLQ with reason, topic, partition and offset headers; the rest flow', async () => {
    const org = await suite.tally.newOrg()
    const good = [
      sampleEvent({ organization_id: org.organizationId }),
      sampleEvent({ organization_id: org.organizationId }),
    ]
    const dlqBefore = await metric('tally_events_dead_lettered_total', `{group="${INGEST}"}`)
    const dead = await suite.readDlq()
    await produceRaw(suite.kafka, topic(), [
      { key: good[0]?.request_id as string, value: suite.codec.encode(good[0] as RequestEvent) },
      { key: 'poison', value: Buffer.from('this is not avro') },
      { key: good[1]?.request_id as string, value: suite.codec.encode(good[1] as RequestEvent) },
    ])
    await written(org, 2)
    await waitFor(() => dead.some((d) => d.value === 'this is not avro'), {
      ...LONG,
      what: 'the poison message in the DLQ',
    })
    const poison = dead.find((d) => d.value === 'this is not avro')
    expect(poison?.headers).toMatchObject({
      'tally-dlq-reason': 'not Avro single-object encoded (missing C3 01 marker)',
      'tally-dlq-topic': topic(),
    })
    expect(Number(poison?.headers['tally-dlq-partition'])).toBeGreaterThanOrEqual(0)
    expect(Number(poison?.headers['tally-dlq-offset'])).toBeGreaterThanOrEqual(0)
    // Counted once the send is acknowledged, which can be after a reader already sees the letter.
    await waitFor(
      async () => (await metric('tally_events_dead_lettered_total', `{group="${INGEST}"}`)) > dlqBefore,
      { ...LONG, what: 'the dead letter counted' },
    )
    expect(await metric('tally_events_dead_lettered_total', `{group="${INGEST}"}`)).toBe(dlqBefore + 1)
  })

  it('ClickHouse down: the consumer retries, commits nothing past unwritten events, then writes them all', async () => {
    const org = await suite.tally.newOrg()
    const settled = await highWatermark(topic())
    await waitFor(async () => (await committed(INGEST, topic())) >= settled, {
      ...LONG,
      what: 'earlier events committed',
    })
    const failuresBefore = await metric('tally_consumer_handler_failures_total', `{group="${INGEST}"}`)
    await suite.tally.clickhouse.command({ query: 'DETACH TABLE request_response_rmt' })
    let attached = false
    try {
      const res = await suite.api.log(
        org,
        Array.from({ length: 24 }, () => ({ model: 'gpt-4o' })),
      )
      expect(res.status).toBe(201)
      // A caller-supplied id cannot be checked against stored rows now, and is accepted anyway.
      expect((await suite.api.log(org, { request_id: randomUUID(), model: 'gpt-4o' })).status).toBe(201)
      await waitFor(
        async () =>
          (await metric('tally_consumer_handler_failures_total', `{group="${INGEST}"}`)) >=
          failuresBefore + 2,
        { ...LONG, what: 'the consumer failing and retrying' },
      )
      expect(await highWatermark(topic())).toBe(settled + 25)
      expect(await committed(INGEST, topic())).toBe(settled)
      await suite.tally.clickhouse.command({ query: 'ATTACH TABLE request_response_rmt' })
      attached = true
    } finally {
      if (!attached) await suite.tally.clickhouse.command({ query: 'ATTACH TABLE request_response_rmt' })
    }
    await written(org, 25)
    expect(await suite.api.count(org)).toBe(25)
    await waitFor(async () => (await committed(INGEST, topic())) === settled + 25, {
      ...LONG,
      what: 'offsets committed after the write',
    })
  })

  it('a consumer stopped in the middle of a batch loses nothing: its successor writes everything once', async () => {
    const org = await suite.tally.newOrg()
    const t = `${topic()}.kill`
    await createTopic(suite.kafka, t, 1)
    const events = Array.from({ length: 50 }, (_, i) =>
      sampleEvent({ organization_id: org.organizationId, model: `m-${i}` }),
    )
    await produceRaw(
      suite.kafka,
      t,
      events.map((e) => ({ key: e.request_id, value: suite.codec.encode(e) })),
    )

    const groupId = `kill-${randomUUID()}`
    const ingest = createIngestHandler(
      suite.tally.clickhouse,
      log,
      await deletedOrganizations(),
      await loadRequestCodec(),
    )
    let chunks = 0
    let crash: (err: Error) => void = () => {}
    const crashing = new Promise<void>((_, reject) => {
      crash = reject
    })
    let inThirdChunk = false
    const dying: EventHandler = {
      name: 'dying',
      async handle(batch) {
        chunks++
        if (chunks < 3) return ingest.handle(batch)
        // Half of the third chunk reaches ClickHouse, then the process "dies" mid-write.
        await ingest.handle(batch.slice(0, batch.length / 2))
        inThirdChunk = true
        return crashing
      },
    }
    const first = await runKafkaConsumer({
      kafka: suite.kafka,
      groupId,
      topic: t,
      dlqTopic: `${t}.dlq`,
      codec: suite.codec,
      handler: dying,
      log,
      chunkSize: 10,
    })
    await waitFor(() => inThirdChunk, { ...LONG, what: 'the third chunk in flight' })
    const stopping = first.stop()
    crash(new Error('killed'))
    await stopping
    expect(first.stats.handled).toBe(20)
    expect(await committed(groupId, t)).toBeLessThanOrEqual(20)
    expect(await suite.api.count(org)).toBe(25)

    const second = await runKafkaConsumer({
      kafka: suite.kafka,
      groupId,
      topic: t,
      dlqTopic: `${t}.dlq`,
      codec: suite.codec,
      handler: ingest,
      log,
      chunkSize: 10,
    })
    suite.stops.push(() => second.stop())
    await written(org, 50)
    await waitFor(async () => (await committed(groupId, t)) === 50, { ...LONG, what: 'all 50 committed' })
    expect(await suite.api.count(org)).toBe(50)
    const q = await suite.api.query(org, { limit: 1000 })
    expect(new Set(q.data.map((r: { request_id: string }) => r.request_id))).toEqual(
      new Set(events.map((e) => e.request_id)),
    )
  })
})
