import { describe, expect, it } from 'vitest'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'
import { engines } from '../support/harness.ts'
import { committedOffsets, produceRaw, topicEnds } from '../support/kafka.ts'
import { waitFor } from '../support/wait.ts'
import { kafkaSuite } from './kafka-suite.ts'

const WAIT = { timeoutMs: 30_000, intervalMs: 100 }

// Events already on the topic that ClickHouse refuses (written by a producer from before the
// intake bounded its inputs): they must not stall the partition, nor any other partition.
describe.skipIf(!engines().kafkaBrokers)('rows ClickHouse can never accept, through real Kafka', () => {
  const suite = kafkaSuite()

  it('are dead-lettered with the ClickHouse error; their partition and the others are written and committed', async () => {
    const org = await suite.tally.newOrg()
    const topic = suite.tally.config.TALLY_REQUEST_TOPIC
    const ev = (o: Partial<RequestEvent> = {}) => sampleEvent({ organization_id: org.organizationId, ...o })
    const poison = ev({ created_at: new Date(8e15), completed_at: new Date(8e15) })
    const p0 = [ev(), poison, ev()]
    const p1 = [ev(), ev(), ev()]

    const dead = await suite.readDlq()

    await produceRaw(suite.kafka, topic, [
      ...p0.map((e) => ({ key: e.request_id, value: suite.codec.encode(e), partition: 0 })),
      ...p1.map((e) => ({ key: e.request_id, value: suite.codec.encode(e), partition: 1 })),
    ])

    await waitFor(async () => (await suite.api.count(org)) === 5, {
      ...WAIT,
      what: 'the 5 good rows written',
    })
    await waitFor(() => dead.some((d) => d.key === poison.request_id), {
      ...WAIT,
      what: 'the bad row in the DLQ',
    })
    const letter = dead.find((d) => d.key === poison.request_id)
    expect(letter?.headers).toMatchObject({
      'tally-dlq-topic': topic,
      'tally-dlq-partition': '0',
      'tally-dlq-offset': expect.stringMatching(/^\d+$/),
    })
    expect(letter?.headers['tally-dlq-reason']).toMatch(/^clickhouse CANNOT_PARSE_DATETIME \(code 41\)/)

    const ends = await topicEnds(suite.kafka, topic)
    await waitFor(
      async () => {
        const committed = await committedOffsets(suite.kafka, `${suite.groupPrefix}tally-ingest`, topic)
        return ends.every((end, partition) => committed.get(partition) === end)
      },
      { ...WAIT, what: 'both partitions committed to their high watermark' },
    )
    const q = await suite.api.query(org, { limit: 100 })
    expect(new Set(q.data.map((r: { request_id: string }) => r.request_id))).toEqual(
      new Set([...p0, ...p1].filter((e) => e !== poison).map((e) => e.request_id)),
    )
  })
})
