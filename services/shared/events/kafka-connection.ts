import type { BaseOptions } from '@platformatic/kafka'
import type { Config } from '../config.ts'
import { withDeadline } from '../deadline.ts'
import type { Logger } from '../logger.ts'

/** Where Kafka is and how long Tally waits for it, shared by every client a process opens. */
export interface KafkaConnection {
  brokers: string[]
  clientId: string
  log: Logger
  /** How long a start-up step (connect, topic creation, producer init, group join) may take in all. */
  startupTimeoutMs: number
  /** How long one send (a publish, dead letters) may wait for Kafka's acknowledgement. */
  sendTimeoutMs: number
}

export function kafkaConnection(config: Config, log: Logger): KafkaConnection {
  if (!config.KAFKA_BROKERS) throw new Error('KAFKA_BROKERS is not set')
  return {
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()),
    clientId: config.KAFKA_CLIENT_ID,
    log,
    startupTimeoutMs: config.TALLY_KAFKA_STARTUP_TIMEOUT,
    sendTimeoutMs: config.TALLY_KAFKA_SEND_TIMEOUT,
  }
}

// Each request is bounded, and each client operation gives up after a few quick retries:
// the waiting that matters (start-up, a broker away) is done by Tally's own steps, which log
// what they wait for and have a deadline.
const REQUEST_TIMEOUT_MS = 10_000

/** Options every Tally client of @platformatic/kafka starts from. */
export function clientOptions(kafka: KafkaConnection): BaseOptions {
  return {
    clientId: kafka.clientId,
    bootstrapBrokers: kafka.brokers,
    connectTimeout: 5_000,
    requestTimeout: REQUEST_TIMEOUT_MS,
    retries: 3,
    retryDelay: 250,
  }
}

/** Kafka did not complete a step within its deadline; names the brokers, the step and the last error. */
class KafkaUnavailableError extends Error {
  constructor(kafka: KafkaConnection, step: string, waitedMs: number, last: unknown) {
    super(
      `Kafka at ${kafka.brokers.join(',')} did not complete "${step}" within ${Math.round(waitedMs / 1000)} s (last error: ${describe(last)})`,
    )
    this.name = 'KafkaUnavailableError'
  }
}

/**
 * Runs a start-up step until it succeeds, each attempt bounded, retried with backoff and logged
 * while it fails, for at most the connection's start-up timeout; then throws a
 * KafkaUnavailableError naming the brokers and the step.
 */
export async function untilKafkaAnswers<T>(
  kafka: KafkaConnection,
  step: string,
  attempt: () => Promise<T>,
  options: { timeoutMs?: number; signal?: AbortSignal; attemptMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? kafka.startupTimeoutMs
  // Several attempts fit in the deadline, so a broker that never answers is logged and retried;
  // a step that bounds its own attempts (a group join) says how long one may take.
  const attemptMs =
    options.attemptMs ?? Math.max(1_000, Math.min(REQUEST_TIMEOUT_MS, Math.floor(timeoutMs / 3)))
  const started = Date.now()
  let backoff = 250
  for (let n = 1; ; n++) {
    const left = timeoutMs - (Date.now() - started)
    try {
      return await withDeadline(attempt(), Math.max(1, Math.min(left, attemptMs)), 'no answer')
    } catch (err) {
      const waited = Date.now() - started
      if (options.signal?.aborted) throw err
      if (waited + backoff >= timeoutMs) throw new KafkaUnavailableError(kafka, step, waited, err)
      kafka.log.warn(
        {
          step,
          brokers: kafka.brokers.join(','),
          attempt: n,
          waitedMs: waited,
          retryInMs: backoff,
          err: describe(err),
        },
        'kafka_waiting',
      )
      await new Promise((resolve) => setTimeout(resolve, backoff))
      backoff = Math.min(backoff * 2, 5_000)
    }
  }
}

/** An error's message with the causes @platformatic/kafka aggregates (the first of each level). */
export function describe(err: unknown): string {
  const parts: string[] = []
  let e: unknown = err
  for (let depth = 0; e && depth < 4; depth++) {
    const { message, errors, cause } = e as { message?: string; errors?: unknown[]; cause?: unknown }
    if (message && !parts.includes(message)) parts.push(message)
    e = errors?.[0] ?? cause
  }
  return parts.join(': ') || String(err)
}
