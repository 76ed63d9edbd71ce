import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadEventCodec } from '../../services/shared/events/codec.ts'
import { readGroupLag } from '../../services/shared/events/consumer-lag.ts'
import type { EventHandler } from '../../services/shared/events/handler.ts'
import { type KafkaConnection, runKafkaConsumer } from '../../services/shared/events/kafka.ts'
import { joinGroup } from '../../services/shared/events/kafka-member.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { engines } from '../support/harness.ts'
import { createTopic, produceRaw } from '../support/kafka.ts'
import { metric } from '../support/metrics.ts'
import { waitFor } from '../support/wait.ts'

const brokers = engines().kafkaBrokers

// The consumer on a real broker: its readiness, the lag it reports, and the watchdog that makes a
// membership anew when it stops making progress with messages waiting.
describe.skipIf(!brokers)('a Kafka consumer that stops making progress', () => {
  const log = pino({ level: 'silent' })
  const kafka: KafkaConnection = {
    brokers: [brokers ?? ''],
    clientId: 'recovery-test',
    log,
    startupTimeoutMs: 60_000,
    sendTimeoutMs: 10_000,
  }
  const topic = `tally.test.recovery.${randomUUID().slice(0, 8)}`
  const stops: (() => Promise<void>)[] = []
  beforeAll(async () => {
    await createTopic(kafka, topic, 2)
    await createTopic(kafka, `${topic}.dlq`, 1)
  })
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop()
  })

  /** A consumer of the test topic in `groupId`, writing with `handler`. */
  const consume = async (
    groupId: string,
    handler: EventHandler,
    options: { stallTimeoutMs?: number; chunkSize?: number } = {},
  ) =>
    runKafkaConsumer({
      kafka,
      groupId,
      topic,
      dlqTopic: `${topic}.dlq`,
      codec: await loadEventCodec(),
      log,
      handler,
      ...options,
    })

  it('is made anew by the watchdog when a write hangs, says so, and then writes everything', async () => {
    const codec = await loadEventCodec()
    const events = Array.from({ length: 40 }, () => sampleEvent())
    await produceRaw(
      kafka,
      topic,
      events.map((e) => ({ key: e.request_id, value: codec.encode(e) })),
    )
    const groupId = `recovery-${randomUUID().slice(0, 8)}`
    const written = new Set<string>()
    let hung = false
    const consumer = await consume(
      groupId,
      {
        name: 'hangs-once',
        async handle(batch: RequestEvent[]) {
          if (!hung) {
            hung = true
            // A write that hangs far past the stall time (it ends, so the test ends).
            await new Promise((resolve) => setTimeout(resolve, 8_000))
            throw new Error('gave up after hanging')
          }
          for (const e of batch) written.add(e.request_id)
        },
      },
      { chunkSize: 10, stallTimeoutMs: 2_000 },
    )
    stops.push(() => consumer.stop())
    const stalledBefore = await metric(
      'tally_consumer_restarts_total',
      `{group="${groupId}",cause="stalled"}`,
    )
    await waitFor(
      async () =>
        (await metric('tally_consumer_restarts_total', `{group="${groupId}",cause="stalled"}`)) >
        stalledBefore,
      { what: 'the watchdog making the membership anew', timeoutMs: 20_000, intervalMs: 100 },
    )
    await waitFor(() => written.size === events.length, { what: 'every event written', timeoutMs: 60_000 })
    await waitFor(
      async () => [...(await readGroupLag(kafka, groupId, topic)).values()].every((lag) => lag === 0),
      { what: 'the group caught up, as the broker tells', timeoutMs: 30_000, intervalMs: 200 },
    )
    await expect(consumer.readiness.check()).resolves.toBeUndefined()
  }, 90_000)

  it('is not ready once stopped, and its group lag comes from the broker (what a new group would read)', async () => {
    const groupId = `recovery-lag-${randomUUID().slice(0, 8)}`
    const lag = await readGroupLag(kafka, groupId, topic)
    // A group that never committed lags by everything on the topic.
    expect([...lag.values()].reduce((a, b) => a + b, 0)).toBe(40)
    const consumer = await consume(groupId, { name: 'ok', handle: async () => {} })
    await waitFor(
      async () => [...(await readGroupLag(kafka, groupId, topic)).values()].every((l) => l === 0),
      {
        what: 'caught up',
        timeoutMs: 30_000,
        intervalMs: 200,
      },
    )
    await expect(consumer.readiness.check()).resolves.toBeUndefined()
    await consumer.stop()
    await expect(consumer.readiness.check()).rejects.toThrow(`not a member of consumer group ${groupId}`)
  }, 60_000)

  it('ends a membership, and not the process, when the client reports a failed rejoin', async () => {
    const member = await joinGroup({
      kafka,
      groupId: `recovery-rejoin-${randomUUID().slice(0, 8)}`,
      topic,
      sessionTimeoutMs: 6_000,
    })
    try {
      expect(member.active()).toBe(true)
      // What @platformatic/kafka emits when the rejoin after a lost heartbeat fails, e.g. when the
      // client closes while it retries findGroupCoordinator: unheard, it would end the process.
      const failed = new Error('findGroupCoordinator failed 3 times. Client closed while retrying')
      expect(() => member.consumer.emit('error', failed)).not.toThrow()
      expect(member.active()).toBe(false)
      expect(member.failure()).toBe(failed)
      await expect(member.next(10, 1024)).resolves.toBeNull()
    } finally {
      await member.close()
    }
    // Closed, the client may still report the rejoin it gave up: heard, and nothing more.
    expect(() => member.consumer.emit('error', new Error('late'))).not.toThrow()
  }, 60_000)
})
