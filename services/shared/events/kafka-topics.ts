import type { ConfigResourceTypes, Kafka } from 'kafkajs'
import type { Config } from '../config.ts'

export const TOPIC_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
// ConfigResourceTypes.TOPIC; kafkajs's CommonJS export of the enum is not visible to ESM imports.
const TOPIC_RESOURCE = 2 as ConfigResourceTypes

/** The topic's max.message.bytes: the largest record batch the broker accepts for it. */
export async function maxMessageBytes(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ['max.message.bytes'] }],
    })
    const value = Number(
      resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue,
    )
    return Number.isFinite(value) && value > 0 ? value : 1024 * 1024
  } finally {
    await admin.disconnect()
  }
}

/** Creates the event and dead-letter topics when missing. */
export async function ensureTopics(kafka: Kafka, config: Config): Promise<void> {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const existing = new Set(await admin.listTopics())
    const wanted = [config.TALLY_REQUEST_TOPIC, config.TALLY_DLQ_TOPIC].filter((t) => !existing.has(t))
    if (wanted.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: wanted.map((topic) => ({
          topic,
          numPartitions: config.TALLY_TOPIC_PARTITIONS,
          // Room for large producer sends (many intakes in one round trip); the publisher reads
          // the effective value, so topics created elsewhere with the 1 MiB default still work.
          configEntries: [{ name: 'max.message.bytes', value: String(TOPIC_MAX_MESSAGE_BYTES) }],
        })),
      })
    }
  } finally {
    await admin.disconnect()
  }
}
