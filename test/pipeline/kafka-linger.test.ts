import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KafkaConnection } from '../../services/shared/events/kafka.ts'
import { joinGroup, type Member } from '../../services/shared/events/kafka-member.ts'
import { engines } from '../support/harness.ts'
import { createTopic, produceRaw } from '../support/kafka.ts'

const brokers = engines().kafkaBrokers

// The ingest's reads (TALLY_INGEST_LINGER_MS): a batch short of full waits for more until the
// linger has passed since the last batch was handed on; a full batch, or one after a quiet spell
// or a slower write, goes on at once.
describe.skipIf(!brokers)('a member reading with a linger, on a real broker', () => {
  const kafka: KafkaConnection = {
    brokers: [brokers ?? ''],
    clientId: 'linger-test',
    log: pino({ level: 'silent' }),
    startupTimeoutMs: 60_000,
    sendTimeoutMs: 10_000,
  }
  const topic = `tally.test.linger.${randomUUID().slice(0, 8)}`
  const produce = (n: number) =>
    produceRaw(
      kafka,
      topic,
      Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(100, i), partition: 0 })),
    )
  let member: Member
  beforeAll(async () => {
    await createTopic(kafka, topic, 1)
    member = await joinGroup({
      kafka,
      groupId: `linger-${randomUUID().slice(0, 8)}`,
      topic,
      sessionTimeoutMs: 6_000,
    })
  })
  afterAll(() => member?.close())

  const timed = async <T>(work: Promise<T>) => {
    const started = performance.now()
    const value = await work
    return { value, ms: performance.now() - started }
  }
  // Far longer than anything here takes without waiting it out.
  const LONG = 30_000

  it('hands on at once what is ready when no batch was handed on within the linger', async () => {
    await produce(5)
    const read = await timed(member.next(100, 1 << 20, LONG))
    expect(read.value?.length).toBeGreaterThan(0)
    expect(read.value?.length).toBeLessThanOrEqual(5)
    expect(read.ms).toBeLessThan(LONG / 2)
    // What the first read left, if the broker split the five.
    let seen = read.value?.length ?? 0
    while (seen < 5) seen += (await member.next(100, 1 << 20))?.length ?? 0
  })

  it('hands on a full batch at once, however long the linger', async () => {
    await produce(40)
    const read = await timed(member.next(30, 1 << 20, LONG))
    expect(read.value).toHaveLength(30)
    expect(read.ms).toBeLessThan(LONG / 2)
  })

  it('under load, waits until the linger after the last batch, and hands on what came meanwhile', async () => {
    // The ten left of the last forty are ready; ten more arrive while the read waits.
    const reading = timed(member.next(100, 1 << 20, 6_000))
    await produce(10)
    const read = await reading
    expect(read.value).toHaveLength(20)
    // Counted from the last batch handed on (the previous test's), a moment before this read began.
    expect(read.ms).toBeGreaterThanOrEqual(5_000)
    expect(read.ms).toBeLessThan(LONG / 2)
  })

  it('after a write slower than the linger, hands on at once', async () => {
    await produce(5)
    // The write of the last batch took longer than the linger below.
    await delay(1_500)
    const read = await timed(member.next(100, 1 << 20, 1_000))
    expect(read.value?.length).toBeGreaterThan(0)
    expect(read.ms).toBeLessThan(500)
  })
})
