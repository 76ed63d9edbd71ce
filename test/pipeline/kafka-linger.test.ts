import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KafkaConnection } from '../../services/shared/events/kafka.ts'
import { joinGroup, type Member } from '../../services/shared/events/kafka-member.ts'
import { engines } from '../support/harness.ts'
import { createTopic, produceRaw } from '../support/kafka.ts'

const brokers = engines().kafkaBrokers

// The ingest's read under load (TALLY_INGEST_LINGER_MS): a trickle and a full batch go on at once;
// a load waits for a fuller batch, at most the linger.
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

  it('hands on a trickle at once, below what counts as a load', async () => {
    await produce(5)
    const read = await timed(member.next(100, 1 << 20, { ms: LONG, fromMessages: 1_000, fromBytes: 1 << 30 }))
    expect(read.value?.length).toBeGreaterThan(0)
    expect(read.value?.length).toBeLessThanOrEqual(5)
    expect(read.ms).toBeLessThan(LONG / 2)
    // What the first read left, if the broker split the five.
    let seen = read.value?.length ?? 0
    while (seen < 5) seen += (await member.next(100, 1 << 20))?.length ?? 0
  })

  it('hands on a full batch at once, however long the linger', async () => {
    await produce(40)
    const read = await timed(member.next(30, 1 << 20, { ms: LONG, fromMessages: 1, fromBytes: 1 }))
    expect(read.value).toHaveLength(30)
    expect(read.ms).toBeLessThan(LONG / 2)
  })

  it('under load, waits up to the linger for more, and hands on what came meanwhile', async () => {
    // The ten left of the last forty are ready; ten more arrive while the read waits.
    const reading = timed(member.next(100, 1 << 20, { ms: 6_000, fromMessages: 1, fromBytes: 1 }))
    await produce(10)
    const read = await reading
    expect(read.value).toHaveLength(20)
    expect(read.ms).toBeGreaterThanOrEqual(5_900)
    expect(read.ms).toBeLessThan(LONG / 2)
  })
})
