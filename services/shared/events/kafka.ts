/**
 * Kafka, as the rest of Tally uses it: where it is (kafka-connection.ts), topics, the publisher
 * and the consumer. The modules behind it import kafka-connection.ts, never this one, so that
 * none of them imports another in a circle.
 */
export { clientOptions, type KafkaConnection, kafkaConnection } from './kafka-connection.ts'
export { runKafkaConsumer } from './kafka-consumer.ts'
export { createKafkaPublisher } from './kafka-publisher.ts'
export { ensureTopics } from './kafka-topics.ts'
