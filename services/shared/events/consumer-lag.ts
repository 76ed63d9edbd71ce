import { withDeadline } from '../deadline.ts'
import { counter, gauge } from '../metrics.ts'
import type { KafkaConnection } from './kafka-connection.ts'
import { withAdmin } from './kafka-topics.ts'

const READ_TIMEOUT_MS = 3_000

/**
 * The group's lag on each partition of `topic`, from the broker itself: the partition's end
 * offset minus what the group committed (or, without a commit, minus the partition's first
 * offset). One round of requests with no retries, bounded in time: a broker that does not
 * answer is an error, never a stale number.
 */
export async function readGroupLag(
  kafka: KafkaConnection,
  groupId: string,
  topic: string,
): Promise<Map<number, number>> {
  const read = withAdmin(
    kafka,
    async (admin) => {
      const { topics } = await admin.metadata({ topics: [topic], forceUpdate: true })
      const count = topics.get(topic)?.partitionsCount ?? 0
      const at = (timestamp: bigint) =>
        admin.listOffsets({
          topics: [
            {
              name: topic,
              partitions: Array.from({ length: count }, (_, p) => ({ partitionIndex: p, timestamp })),
            },
          ],
        })
      const [ends, starts, groups] = await Promise.all([
        at(-1n),
        at(-2n),
        admin.listConsumerGroupOffsets({ groups: [groupId] }),
      ])
      const offsets = (listed: typeof ends) =>
        new Map((listed[0]?.partitions ?? []).map((p) => [p.partitionIndex, Number(p.offset)]))
      const end = offsets(ends)
      const start = offsets(starts)
      const committed = new Map(
        (groups[0]?.topics.find((t) => t.name === topic)?.partitions ?? []).map((p) => [
          p.partitionIndex,
          Number(p.committedOffset),
        ]),
      )
      const lag = new Map<number, number>()
      for (let p = 0; p < count; p++) {
        const from = Math.max(committed.get(p) ?? -1, start.get(p) ?? 0)
        lag.set(p, Math.max(0, (end.get(p) ?? 0) - from))
      }
      return lag
    },
    { retries: 0, requestTimeout: READ_TIMEOUT_MS },
  )
  return withDeadline(read, READ_TIMEOUT_MS, `no answer from Kafka about group ${groupId}'s offsets`)
}

/** The groups this process consumes, each with how to read its lag: what a scrape reports. */
const groups = new Map<string, () => Promise<Map<number, number>>>()

const lagReadFailures = counter(
  'tally_consumer_lag_read_failures_total',
  'Scrapes at which the broker did not tell a group’s offsets in time (tally_consumer_lag is then absent)',
  {
    labelNames: ['group'],
  },
)

gauge(
  'tally_consumer_lag',
  'Messages between the group’s committed offset and the partition end, asked of the broker at each scrape',
  {
    labelNames: ['group', 'topic', 'partition'],
    async collect() {
      this.reset()
      await Promise.all(
        [...groups].map(async ([key, read]) => {
          const [group, topic] = key.split('\n') as [string, string]
          try {
            for (const [partition, lag] of await read())
              this.set({ group, topic, partition: String(partition) }, lag)
          } catch {
            lagReadFailures.inc({ group })
          }
        }),
      )
    },
  },
)

/** Reports `group`'s lag on `topic` at every scrape until the returned function is called. */
export function reportLag(kafka: KafkaConnection, groupId: string, topic: string): () => void {
  const key = `${groupId}\n${topic}`
  groups.set(key, () => readGroupLag(kafka, groupId, topic))
  return () => void groups.delete(key)
}
