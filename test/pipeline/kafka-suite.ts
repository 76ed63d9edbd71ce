import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll } from 'vitest'
import { type Codec, loadEventCodec } from '../../services/shared/events/codec.ts'
import type { TallyEvent } from '../../services/shared/events/event.ts'
import { type KafkaConnection, kafkaConnection } from '../../services/shared/events/kafka.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { type ReadMessage, readTopic } from '../support/kafka.ts'
import { requestApi } from './client.ts'

export interface KafkaSuite {
  tally: TestTally
  api: ReturnType<typeof requestApi>
  kafka: KafkaConnection
  codec: Codec<TallyEvent>
  /** This file's consumer groups start with it (its ingest group is `${groupPrefix}tally-ingest`). */
  groupPrefix: string
  /** Run after the file, last added first, before Tally closes. */
  stops: (() => Promise<void>)[]
  /** Starts reading the DLQ topic from its beginning; the list fills as letters arrive (until the file ends). */
  readDlq(): Promise<ReadMessage[]>
}

/**
 * Starts, for the calling test file, Tally on real Kafka with consumer groups of the file's own
 * (a group shared with another run on the same Kafka would split its partitions with it), the
 * Kafka connection and the event codec; stops them after the file.
 */
export function kafkaSuite(): KafkaSuite {
  const suite = {
    groupPrefix: `run-${randomUUID().slice(0, 8)}.`,
    stops: [],
    async readDlq() {
      const reader = await readTopic(suite.kafka, suite.tally.config.TALLY_DLQ_TOPIC)
      suite.stops.push(() => reader.stop())
      return reader.messages
    },
  } as unknown as KafkaSuite
  beforeAll(async () => {
    suite.tally = await startTestTally({
      kafka: true,
      env: { TALLY_CONSUMER_GROUP_PREFIX: suite.groupPrefix },
    })
    suite.api = requestApi(suite.tally)
    suite.kafka = kafkaConnection(suite.tally.config, pino({ level: 'silent' }))
    suite.codec = await loadEventCodec()
  })
  afterAll(async () => {
    for (const stop of suite.stops.reverse()) await stop()
    await suite.tally?.close()
  })
  return suite
}
