import { randomUUID } from 'node:crypto'
import type { Kafka } from 'kafkajs'
import { pino } from 'pino'
import { afterAll, beforeAll } from 'vitest'
import { type Codec, loadRequestEventCodec } from '../../services/shared/events/codec.ts'
import { createKafka } from '../../services/shared/events/kafka.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { requestApi } from './client.ts'

export interface KafkaSuite {
  tally: TestTally
  api: ReturnType<typeof requestApi>
  kafka: Kafka
  codec: Codec<RequestEvent>
  /** This file's consumer groups start with it (its ingest group is `${groupPrefix}tally-ingest`). */
  groupPrefix: string
  /** Run after the file, last added first, before Tally closes. */
  stops: (() => Promise<void>)[]
  /** Starts reading the DLQ topic from its beginning; the list fills as letters arrive (until the file ends). */
  readDlq(): Promise<DeadLetter[]>
}

interface DeadLetter {
  key: string
  value: string
  headers: Record<string, string>
}

/**
 * Starts, for the calling test file, Tally on real Kafka with consumer groups of the file's own
 * (kafkajs's assigner hands a group's partitions out without regard to each member's topics: a
 * group shared with another run on the same Kafka would starve), a Kafka client and the event
 * codec; stops them after the file.
 */
export function kafkaSuite(): KafkaSuite {
  const suite = {
    groupPrefix: `run-${randomUUID().slice(0, 8)}.`,
    stops: [],
    async readDlq() {
      const dead: DeadLetter[] = []
      const reader = suite.kafka.consumer({ groupId: `dlq-reader-${randomUUID()}` })
      await reader.connect()
      suite.stops.push(() => reader.disconnect())
      await reader.subscribe({ topic: suite.tally.config.TALLY_DLQ_TOPIC, fromBeginning: true })
      await reader.run({
        eachMessage: async ({ message }) => {
          const headers = Object.fromEntries(
            Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]),
          )
          dead.push({ key: String(message.key), value: String(message.value), headers })
        },
      })
      return dead
    },
  } as unknown as KafkaSuite
  beforeAll(async () => {
    suite.tally = await startTestTally({
      kafka: true,
      env: { TALLY_CONSUMER_GROUP_PREFIX: suite.groupPrefix },
    })
    suite.api = requestApi(suite.tally)
    suite.kafka = createKafka(suite.tally.config, pino({ level: 'silent' }))
    suite.codec = await loadRequestEventCodec()
  })
  afterAll(async () => {
    for (const stop of suite.stops.reverse()) await stop()
    await suite.tally?.close()
  })
  return suite
}
