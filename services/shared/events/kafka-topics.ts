import { Admin, type BaseOptions, ConfigResourceTypes } from '@platformatic/kafka'
import type { Config } from '../config.ts'
import { clientOptions, type KafkaConnection, untilKafkaAnswers } from './kafka-connection.ts'

export const TOPIC_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/** Runs `work` with an admin client (`options` over Tally's own), closed afterwards whatever happened. */
export async function withAdmin<T>(
  kafka: KafkaConnection,
  work: (admin: Admin) => Promise<T>,
  options: Partial<BaseOptions> = {},
): Promise<T> {
  const admin = new Admin({ ...clientOptions(kafka), ...options })
  try {
    return await work(admin)
  } finally {
    await admin.close().catch(() => {})
  }
}

/** The topic's max.message.bytes: the largest record batch the broker accepts for it. */
export async function maxMessageBytes(kafka: KafkaConnection, topic: string): Promise<number> {
  const [described] = await untilKafkaAnswers(kafka, `describe topic ${topic}`, () =>
    withAdmin(kafka, (admin) =>
      admin.describeConfigs({
        resources: [
          {
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: topic,
            configurationKeys: ['max.message.bytes'],
          },
        ],
      }),
    ),
  )
  const value = Number(described?.configs.find((c) => c.name === 'max.message.bytes')?.value)
  return Number.isFinite(value) && value > 0 ? value : 1024 * 1024
}

/**
 * Creates the event and dead-letter topics when missing and waits until every partition of both
 * has a leader. Each step is retried until the start-up deadline: a broker that is still starting
 * is waited for, one that never answers is named in the error.
 */
export async function ensureTopics(kafka: KafkaConnection, config: Config): Promise<void> {
  const topics = [config.TALLY_REQUEST_TOPIC, config.TALLY_DLQ_TOPIC]
  await untilKafkaAnswers(kafka, `create topics ${topics.join(', ')}`, () =>
    withAdmin(kafka, async (admin) => {
      const existing = new Set(await admin.listTopics())
      const wanted = topics.filter((t) => !existing.has(t))
      if (wanted.length === 0) return
      try {
        await admin.createTopics({
          topics: wanted,
          partitions: config.TALLY_TOPIC_PARTITIONS,
          replicas: -1, // the broker's default.replication.factor
          // Room for large producer sends (many intakes in one round trip); the publisher reads
          // the effective value, so topics created elsewhere with the 1 MiB default still work.
          configs: [{ name: 'max.message.bytes', value: String(TOPIC_MAX_MESSAGE_BYTES) }],
        })
      } catch (err) {
        // Another process created them in between: what matters is that they exist.
        const now = new Set(await admin.listTopics())
        if (!wanted.every((t) => now.has(t))) throw err
      }
    }),
  )
  await untilKafkaAnswers(kafka, `leaders for ${topics.join(', ')}`, () =>
    withAdmin(kafka, async (admin) => {
      const metadata = await admin.metadata({ topics, forceUpdate: true })
      for (const topic of topics) {
        const partitions = metadata.topics.get(topic)?.partitions ?? []
        const leaderless = partitions.filter((p) => !p || p.leader < 0).length
        if (partitions.length === 0 || leaderless > 0)
          throw new Error(`${topic}: ${leaderless} of ${partitions.length} partitions have no leader yet`)
      }
    }),
  )
}
