import { pino } from 'pino'
import { loadConfig } from '../../services/shared/config.ts'
import { loadEventCodec } from '../../services/shared/events/codec.ts'
import { createKafkaPublisher, ensureTopics, kafkaConnection } from '../../services/shared/events/kafka.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'

/** Puts events on the topic that `env` names (creating it), as an API process would. */
export async function publishToTopic(env: Record<string, string>, events: RequestEvent[]) {
  const config = loadConfig(env)
  const kafka = kafkaConnection(config, pino({ level: 'silent' }))
  await ensureTopics(kafka, config)
  const publisher = await createKafkaPublisher(kafka, config.TALLY_REQUEST_TOPIC, await loadEventCodec())
  await publisher.publish(events)
  await publisher.close()
  return { config, kafka }
}

/** `tally_events_written_total` of a process serving /metrics on `port`; 0 until it answers. */
export async function eventsWritten(port: number | string): Promise<number> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    return Number(/^tally_events_written_total (\d+)$/m.exec(text)?.[1] ?? 0)
  } catch {
    return 0
  }
}
