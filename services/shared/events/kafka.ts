import { Kafka, logLevel } from 'kafkajs'
import type { Config } from '../config.ts'
import type { Logger } from '../logger.ts'

export { runKafkaConsumer } from './kafka-consumer.ts'
export { createKafkaPublisher } from './kafka-publisher.ts'
export { ensureTopics } from './kafka-topics.ts'

export function createKafka(config: Config, log: Logger): Kafka {
  if (!config.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set')
  return new Kafka({
    clientId: config.KAFKA_CLIENT_ID,
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()),
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => log.warn({ kafka: entry.namespace, ...entry.log }, 'kafka_client'),
    retry: { initialRetryTime: 200, retries: 8 },
  })
}
