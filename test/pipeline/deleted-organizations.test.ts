import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestHandler } from '../../services/ingest/handler.ts'
import type { ClickHouseClient } from '../../services/shared/clickhouse/client.ts'
import { createDeletedOrganizations } from '../../services/shared/deleted-organizations.ts'
import { loadRequestCodec } from '../../services/shared/events/codec.ts'
import { kafkaConnection } from '../../services/shared/events/kafka.ts'
import { apiAs, type Caller } from '../support/api.ts'
import { sampleEvent } from '../support/events.ts'
import { engines, startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { committedOffsets, topicEnds } from '../support/kafka.ts'
import { metric } from '../support/metrics.ts'
import { waitFor } from '../support/wait.ts'
import { requestApi } from './client.ts'

const log = pino({ level: 'silent' })
const ADMIN_KEY = `tally-admin-${randomUUID()}`
const admin: Caller = { headers: { authorization: `Bearer ${ADMIN_KEY}` } }
const LONG = { timeoutMs: 60_000 }

describe.skipIf(!engines().kafkaBrokers)(
  'events of a deleted organization on their way through Kafka',
  () => {
    // The API alone: what it publishes waits in Kafka until the test starts the consumers.
    let api: TestTally
    let consumers: TestTally | undefined
    beforeAll(async () => {
      api = await startTestTally({
        kafka: true,
        roles: { api: true, ingest: false, dispatcher: false, exporter: false },
        env: { TALLY_ADMIN_API_KEY: ADMIN_KEY },
      })
    })
    afterAll(async () => {
      await consumers?.close()
      await api?.close()
    })

    /** Ingest and the dispatcher on the API's topic and groups (with an API of their own, as the harness starts one). */
    async function startConsumers(): Promise<TestTally> {
      consumers ??= await startTestTally({
        kafka: true,
        env: {
          TALLY_REQUEST_TOPIC: api.config.TALLY_REQUEST_TOPIC,
          TALLY_DLQ_TOPIC: api.config.TALLY_DLQ_TOPIC,
          TALLY_CONSUMER_GROUP_PREFIX: api.config.TALLY_CONSUMER_GROUP_PREFIX,
        },
      })
      return consumers
    }

    /** Until the group has committed every message published so far. */
    async function consumedAll(group: string) {
      const kafka = kafkaConnection(api.config, log)
      const topic = api.config.TALLY_REQUEST_TOPIC
      const groupId = `${api.config.TALLY_CONSUMER_GROUP_PREFIX}${group}`
      const ends = await topicEnds(kafka, topic)
      await waitFor(
        async () => {
          const committed = await committedOffsets(kafka, groupId, topic)
          return ends.every((end, partition) => (committed.get(partition) ?? -1) >= end)
        },
        { ...LONG, what: `${group} to commit everything published` },
      )
    }

    async function organization(): Promise<TestOrg> {
      const res = await apiAs(api.app, admin).post('/admin/v1/organizations', {
        name: `doomed-${randomUUID()}`,
      })
      expect(res.status, res.error ?? '').toBe(201)
      return {
        organizationId: res.data.id,
        apiKey: res.data.api_key,
        headers: { authorization: `Bearer ${res.data.api_key}` },
      }
    }

    const requests = (n: number) =>
      Array.from({ length: n }, () => ({ model: 'gpt-4o-mini', cost_usd: 0.01 }))

    it('are not written to ClickHouse once it is deleted; the events of others are', async () => {
      const doomed = await organization()
      const kept = await api.newOrg()
      const intake = requestApi(api)
      expect((await intake.log(doomed, requests(40))).status).toBe(201)
      expect((await intake.log(kept, requests(10))).status).toBe(201)
      expect(await apiAs(api.app, admin).delete(`/admin/v1/organizations/${doomed.organizationId}`)).toEqual({
        status: 200,
        data: null,
        error: null,
      })
      const droppedBefore = await metric('tally_ingest_events_dropped_total')

      await startConsumers()
      await consumedAll('tally-ingest')
      expect(await intake.count(kept)).toBe(10)
      expect(await intake.count(doomed)).toBe(0)
      expect(await metric('tally_ingest_events_dropped_total')).toBe(droppedBefore + 40)
    }, 90_000)

    it('get no webhook delivery while the deletion is under way, and no row', async () => {
      const doomed = await organization()
      const hook = await apiAs(api.app, doomed).post('/v1/webhooks', {
        destination: 'https://receiver.invalid/hook',
      })
      expect(hook.status, hook.error ?? '').toBe(201)
      // The deletion began (recorded, announced) and stopped before its end, as when it answers 503.
      await api.sql`insert into deleted_organizations (organization_id) values (${doomed.organizationId})`
      await api.sql`select pg_notify('tally_organization_deletions', ${doomed.organizationId})`
      const kept = await api.newOrg()
      const intake = requestApi(api)
      expect((await intake.log(doomed, requests(5))).status).toBe(201)
      expect((await intake.log(kept, requests(1))).status).toBe(201)

      await startConsumers()
      await consumedAll('tally-ingest')
      await consumedAll('tally-dispatcher')
      expect(await intake.count(kept)).toBe(1)
      expect(await intake.count(doomed)).toBe(0)
      expect(await api.sql`select 1 from webhook_deliveries where webhook_id = ${hook.data.id}`).toHaveLength(
        0,
      )
    }, 90_000)
  },
)

describe('a deletion in the middle of writes (in-process transport)', () => {
  let tally: TestTally
  beforeAll(async () => {
    tally = await startTestTally({ env: { TALLY_ADMIN_API_KEY: ADMIN_KEY } })
  })
  afterAll(() => tally?.close())

  it('lands after the deletion removed the rows, and is removed again once written', async () => {
    const deletions = await createDeletedOrganizations(tally.sql, log)
    try {
      const res = await apiAs(tally.app, admin).post('/admin/v1/organizations', { name: 'late' })
      const org = { organizationId: res.data.id as string, apiKey: '', headers: { authorization: '' } }
      // An ingest process whose insert is slow: it holds the batch until the deletion answered.
      const released = Promise.withResolvers<void>()
      const started = Promise.withResolvers<void>()
      const ch = tally.clickhouse
      const held = async () => {
        started.resolve()
        await released.promise
      }
      const slow = {
        async insert(params: Parameters<ClickHouseClient['insert']>[0]) {
          await held()
          return ch.insert(params)
        },
        async exec(params: Parameters<ClickHouseClient['exec']>[0]) {
          await held()
          return ch.exec(params)
        },
        query: (params: Parameters<ClickHouseClient['query']>[0]) => ch.query(params),
        command: (params: Parameters<ClickHouseClient['command']>[0]) => ch.command(params),
      } as unknown as ClickHouseClient
      const handler = createIngestHandler(slow, log, deletions, await loadRequestCodec())
      const batch = Array.from({ length: 5 }, () => sampleEvent({ organization_id: org.organizationId }))
      const writing = handler.handle(batch)
      await started.promise

      const deleted = await apiAs(tally.app, admin).delete(`/admin/v1/organizations/${org.organizationId}`)
      expect(deleted.status).toBe(200)
      released.resolve()
      await writing
      await waitFor(async () => (await requestApi(tally).count(org)) === 0, {
        what: "the late batch's rows removed again",
      })
      // And a redelivery of the batch writes nothing.
      await handler.handle(batch)
      expect(await requestApi(tally).count(org)).toBe(0)
    } finally {
      await deletions.close()
    }
  })

  it('an ingest process that never wrote the organization deletes nothing again', async () => {
    const res = await apiAs(tally.app, admin).post('/admin/v1/organizations', { name: 'quiet' })
    const id = res.data.id as string
    const other = await tally.newOrg()
    expect((await requestApi(tally).log(other, [{ model: 'gpt-4o-mini' }])).status).toBe(201)
    expect((await apiAs(tally.app, admin).delete(`/admin/v1/organizations/${id}`)).status).toBe(200)
    // Only the deletion's own DELETE, one per table (a sweep would have been issued by the next write).
    expect((await requestApi(tally).log(other, [{ model: 'gpt-4o-mini' }])).status).toBe(201)
    const rs = await tally.clickhouse.query({
      query: `SELECT table FROM system.mutations
              WHERE database = currentDatabase() AND position(command, {org:String}) > 0 ORDER BY table`,
      query_params: { org: id },
      format: 'JSONEachRow',
    })
    expect(await rs.json()).toEqual([
      { table: 'request_hour_inserts' },
      { table: 'request_hours' },
      { table: 'request_property_updates' },
      { table: 'request_response_rmt' },
      { table: 'scores' },
      { table: 'session_hour_totals' },
      { table: 'session_hours' },
    ])
  })

  it('while the organization floods the intake: nothing of it remains once its calls have ended', async () => {
    const res = await apiAs(tally.app, admin).post('/admin/v1/organizations', { name: 'flood' })
    const org = {
      organizationId: res.data.id as string,
      apiKey: '',
      headers: { authorization: `Bearer ${res.data.api_key}` },
    }
    const intake = requestApi(tally)
    const batch = Array.from({ length: 20 }, () => ({ model: 'gpt-4o-mini' }))
    let refused = 0
    // Callers that send until their key stops working.
    const callers = Array.from({ length: 8 }, async () => {
      for (;;) {
        const sent = await intake.log(org, batch)
        if (sent.status === 401) return void refused++
        expect(sent.status).toBe(201)
      }
    })
    await waitFor(async () => (await intake.count(org)) > 0, { what: 'the flood written' })
    const deleted = await apiAs(tally.app, admin).delete(`/admin/v1/organizations/${org.organizationId}`)
    expect(deleted.status).toBe(200)
    await Promise.all(callers)
    expect(refused).toBe(8)
    await waitFor(async () => (await intake.count(org)) === 0, { what: "the flood's rows gone" })
    const other = await tally.newOrg()
    expect((await intake.log(other, batch)).status).toBe(201)
    expect(await intake.count(other)).toBe(20)
    expect(await intake.count(org)).toBe(0)
  })
})
