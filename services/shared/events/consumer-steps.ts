import { abortableDelay } from '../deadline.ts'
import type { Logger } from '../logger.ts'
import { counter } from '../metrics.ts'
import { type Codec, DecodeError } from './codec.ts'
import type { TallyEvent } from './event.ts'
import type { BatchWriter, Unrecordable } from './handler.ts'

// The steps of consuming the event topic, apart from any Kafka client: the client's adapter
// hands each partition's batch to `handleBatch` as a PartitionBatch.

/** A message as the steps see it, whichever client read it. */
export interface ConsumedMessage {
  key: Buffer | null
  value: Buffer | null
  headers?: MessageHeaders
  offset: string
}

export type MessageHeaders = Record<string, Buffer | string | (Buffer | string)[] | undefined>

/** A message for the dead-letter topic: the original key and value, and headers saying why and whence. */
interface DeadLetterMessage {
  key: Buffer | null
  value: Buffer | null
  headers: MessageHeaders
}

/** One partition's batch, and what the steps need of the client while they work through it. */
export interface PartitionBatch {
  topic: string
  partition: number
  messages: ConsumedMessage[]
  /** False once the consumer is stopping or the partition was taken away (rebalance). */
  alive(): boolean
  /** Marks everything up to and including `offset` handled, and commits it. */
  commit(offset: string): Promise<void>
}

export interface ConsumerStats {
  consumed: number
  handled: number
  deadLettered: number
  failures: number
}

export interface StepsOptions {
  groupId: string
  codec: Codec<TallyEvent>
  /** Writes durably; calls of several partitions arriving together share one write. */
  writer: BatchWriter
  /** Resolves once the dead-letter topic holds the messages. */
  sendDeadLetters(messages: DeadLetterMessage[]): Promise<void>
  /**
   * Whether this group dead-letters messages that cannot be decoded. Every group reads the same
   * messages; one of them sends the letter, the others skip them, so each has one letter.
   */
  deadLetterUndecodable?: boolean
  log: Logger
  /** Largest number of events handed to the writer at once. */
  chunkSize: number
  /** Largest size of the messages handed to the writer at once (a message larger alone goes alone). */
  chunkBytes?: number
  maxBackoffMs: number
  /** Aborted when the consumer stops: a backoff in progress ends at once. */
  signal: AbortSignal
  /** Called at every write attempt, failed or not: the consumer is working. */
  onAttempt?: () => void
}

/**
 * After this many failed writes of one chunk, it is written in isolating parts; an event whose
 * part fails while the others are written, STRIKES times over, is dead-lettered (suspect): a
 * row the dependency never takes neither blocks its partition nor is retried forever. When
 * nothing of the chunk is written (the dependency down), the chunk keeps being retried.
 */
const ISOLATE_AFTER = 5
const STRIKES = 3

/** A counter of what this process's consumer groups did, by group. */
const perGroup = (name: string, help: string) => counter(name, help, { labelNames: ['group'] })

const consumedTotal = perGroup(
  'tally_events_consumed_total',
  'Messages read from the event topic (redeliveries count again)',
)
const handledTotal = perGroup(
  'tally_events_handled_total',
  'Events the group durably handled (for tally-ingest: written to ClickHouse) before committing',
)
const deadLetteredTotal = perGroup(
  'tally_events_dead_lettered_total',
  'Messages sent to the dead-letter topic',
)
const undecodableSkipped = perGroup(
  'tally_events_undecodable_skipped_total',
  'Undecodable messages a group passed over because another group dead-letters them',
)
const handlerFailures = perGroup(
  'tally_consumer_handler_failures_total',
  'Failed attempts to handle a chunk (retried with backoff, never skipped)',
)

/**
 * Handles each partition's batch chunk by chunk: decode; dead-letter what cannot be decoded;
 * write the events durably; dead-letter the ones the writer can never record; only then commit
 * the chunk's offsets. A failure to write or to dead-letter (a dependency down) is retried with
 * backoff, never skipped (the client heartbeats on its own meanwhile). When the batch stops being alive the unfinished
 * remainder is left uncommitted, for redelivery.
 */
export function createConsumerSteps(options: StepsOptions) {
  const { groupId, codec, writer, log, chunkSize } = options
  const chunkBytes = options.chunkBytes ?? Number.POSITIVE_INFINITY
  const deadLetterUndecodable = options.deadLetterUndecodable ?? true
  const stats: ConsumerStats = { consumed: 0, handled: 0, deadLettered: 0, failures: 0 }
  const group = { group: groupId }

  /** Retries `work` until it succeeds; false when the batch stopped being alive first. */
  const untilDone = (batch: PartitionBatch, work: () => Promise<void>) =>
    retryUntilDone(work, {
      alive: () => batch.alive(),
      log,
      maxBackoffMs: options.maxBackoffMs,
      signal: options.signal,
      onFailure: () => {
        stats.failures++
        handlerFailures.inc(group)
      },
    })

  /** Sends the letters with their origin headers, retried until sent; false when stopping first. */
  async function deadLetter(batch: PartitionBatch, letters: DeadLetter[]): Promise<boolean> {
    if (letters.length === 0) return true
    const messages = letters.map(({ message, reason }) => ({
      key: message.key,
      value: message.value,
      headers: deadLetterHeaders(message, reason, { ...batch, group: groupId }),
    }))
    if (!(await untilDone(batch, () => options.sendDeadLetters(messages)))) return false
    stats.deadLettered += letters.length
    deadLetteredTotal.inc(group, letters.length)
    const reasons = letters.map((l) => l.reason).slice(0, 5)
    log.warn({ count: letters.length, partition: batch.partition, reasons }, 'events_dead_lettered')
    return true
  }

  /**
   * Writes the events, retried until written. The writer isolates the ones it can never record
   * (a row ClickHouse refuses) and writes the rest; returns those, or undefined when stopping first.
   */
  async function write(batch: PartitionBatch, events: TallyEvent[]): Promise<Unrecordable[] | undefined> {
    let unrecordable: Unrecordable[] = []
    if (events.length === 0) return unrecordable
    let attempts = 0
    const strikes = new Map<number, number>()
    const written = await untilDone(batch, async () => {
      attempts++
      options.onAttempt?.()
      const result = await writer.write(events, attempts > ISOLATE_AFTER ? { isolate: true } : undefined)
      const suspects = result.filter((u) => u.suspect)
      for (const u of suspects) strikes.set(u.index, (strikes.get(u.index) ?? 0) + 1)
      const pending = suspects.filter((u) => (strikes.get(u.index) ?? 0) < STRIKES)
      if (pending.length > 0)
        throw new Error(
          `${pending.length} event(s) failed alone while the rest of their chunk was written (${pending[0]?.reason}); tried again before they are dead-lettered`,
        )
      unrecordable = result.map((u) =>
        u.suspect
          ? {
              index: u.index,
              reason: `failed ${attempts} writes, ${STRIKES} of them alone while the rest of its chunk was written: ${u.reason}`,
            }
          : u,
      )
    })
    return written ? unrecordable : undefined
  }

  /** One chunk through every step; false when the batch stopped being alive before its commit. */
  async function handleChunk(batch: PartitionBatch, messages: ConsumedMessage[]): Promise<boolean> {
    const { events, from, poison } = decode(codec, messages)
    stats.consumed += messages.length
    consumedTotal.inc(group, messages.length)
    // Dead letters first and on their own: a later write retry must not send them twice.
    if (deadLetterUndecodable) {
      if (!(await deadLetter(batch, poison))) return false
    } else if (poison.length > 0) {
      undecodableSkipped.inc(group, poison.length)
      log.warn({ count: poison.length, partition: batch.partition }, 'undecodable_events_skipped')
    }
    const unrecordable = await write(batch, events)
    if (!unrecordable) return false
    // Refused events go to the DLQ before the commit moves past them.
    const refused = unrecordable.map((u) => ({ message: from[u.index] as ConsumedMessage, reason: u.reason }))
    if (!(await deadLetter(batch, refused))) return false
    stats.handled += events.length - unrecordable.length
    handledTotal.inc(group, events.length - unrecordable.length)
    await batch.commit((messages.at(-1) as ConsumedMessage).offset)
    return true
  }

  return {
    stats,
    async handleBatch(batch: PartitionBatch): Promise<void> {
      for (let start = 0; start < batch.messages.length; ) {
        if (!batch.alive()) return
        const end = chunkEnd(batch.messages, start, chunkSize, chunkBytes)
        if (!(await handleChunk(batch, batch.messages.slice(start, end)))) return
        start = end
      }
    },
  }
}

interface DeadLetter {
  message: ConsumedMessage
  reason: string
}

/** Where the chunk that starts at `start` ends: at most `maxCount` messages and `maxBytes` (at least one). */
function chunkEnd(messages: ConsumedMessage[], start: number, maxCount: number, maxBytes: number): number {
  let end = start
  let bytes = 0
  while (end < messages.length && end - start < maxCount) {
    const size = (messages[end]?.value?.length ?? 0) + (messages[end]?.key?.length ?? 0)
    if (end > start && bytes + size > maxBytes) break
    bytes += size
    end++
  }
  return end
}

/**
 * The events of the messages that decode, each with the message it came from (`from[i]` for
 * `events[i]`), and the messages that never will, with why. Any other error is not the
 * message's fault and is thrown.
 */
function decode(codec: Codec<TallyEvent>, messages: ConsumedMessage[]) {
  const events: TallyEvent[] = []
  const from: ConsumedMessage[] = []
  const poison: DeadLetter[] = []
  for (const message of messages) {
    try {
      if (!message.value) throw new DecodeError('empty message value')
      events.push(codec.decode(message.value))
      from.push(message)
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err
      poison.push({ message, reason: err.message })
    }
  }
  return { events, from, poison }
}

/** The original headers plus why the message was dead-lettered, where it was read, and by which group. */
function deadLetterHeaders(
  message: ConsumedMessage,
  reason: string,
  origin: { topic: string; partition: number; group: string },
): MessageHeaders {
  return {
    ...message.headers,
    'tally-dlq-reason': reason,
    'tally-dlq-topic': origin.topic,
    'tally-dlq-partition': String(origin.partition),
    'tally-dlq-offset': message.offset,
    'tally-dlq-group': origin.group,
  }
}

/** Runs `work` until it succeeds; false when the consumer had to stop first. */
async function retryUntilDone(
  work: () => Promise<void>,
  ctx: {
    alive: () => boolean
    log: Logger
    maxBackoffMs: number
    signal: AbortSignal
    onFailure: () => void
  },
): Promise<boolean> {
  let backoff = 200
  for (;;) {
    try {
      await work()
      return true
    } catch (err) {
      ctx.onFailure()
      ctx.log.error({ err, retryInMs: backoff }, 'event_batch_failed')
      if (!ctx.alive()) return false
      await abortableDelay(backoff, ctx.signal)
      if (!ctx.alive()) return false
      backoff = Math.min(backoff * 2, ctx.maxBackoffMs)
    }
  }
}
