import { abortableDelay, withDeadline } from '../deadline.ts'
import type { Logger } from '../logger.ts'
import type { ReadinessCheck } from '../process/role.ts'
import { coalesce } from './coalesced-writer.ts'
import type { Codec } from './codec.ts'
import { reportLag } from './consumer-lag.ts'
import {
  type ConsumedMessage,
  type ConsumerStats,
  createConsumerSteps,
  type MessageHeaders,
  type PartitionBatch,
} from './consumer-steps.ts'
import { countRestart, createWatchdog, MemberStalled } from './consumer-watchdog.ts'
import type { TallyEvent } from './event.ts'
import type { EventHandler } from './handler.ts'
import { describe, type KafkaConnection, untilKafkaAnswers } from './kafka-connection.ts'
import { joinGroup, joinTimeoutMs, type KafkaMessage, type Member } from './kafka-member.ts'
import { createReliableProducer } from './kafka-publisher.ts'
import { type OffsetContinuity, offsetContinuity } from './offset-continuity.ts'

export interface RunningConsumer {
  stats: ConsumerStats
  /** Ready while a member of its group that the broker lists, and progressing. */
  readiness: ReadinessCheck
  stop(): Promise<void>
}

export interface ConsumerOptions {
  kafka: KafkaConnection
  groupId: string
  topic: string
  dlqTopic: string
  codec: Codec<TallyEvent>
  handler: EventHandler
  log: Logger
  /** Largest number of events handed to the handler at once. */
  chunkSize?: number
  /** Largest size of the messages handed to the handler at once (one message may exceed it alone). */
  chunkBytes?: number
  maxBackoffMs?: number
  /** The group's session timeout: how long a member that stopped heartbeating keeps its partitions. */
  sessionTimeoutMs?: number
  /** Static membership: a restarted process with the same id takes its partitions back at once. */
  instanceId?: string | undefined
  /** How long the member may go without progress while messages wait before it is made anew. */
  stallTimeoutMs?: number
  /** Whether this group dead-letters messages that cannot be decoded (one group does, for all). */
  deadLetterUndecodable?: boolean
  /**
   * How long after the last chunk a chunk short of full may wait for more: at most one write that
   * often, and fuller ones. 0 (the default): what is ready is handed on at once.
   */
  lingerMs?: number
}

// A commit Kafka does not answer in this time counts as failed: the membership is made anew and
// reads from the committed offsets (what was written and not committed is redelivered and
// deduplicated).
const COMMIT_TIMEOUT_MS = 15_000

/**
 * Consumes the event topic with @platformatic/kafka through the consumer steps
 * (consumer-steps.ts): what is ready on the stream is read at once (bounded in count and
 * bytes), split by partition, and the partitions' chunks are handled together (their writes
 * coalesce); a chunk's offsets are committed only once it was written durably. A message that
 * cannot be decoded, or an event the handler can never record, goes to the dead-letter topic
 * with its reason and origin. A handler failure (a dependency down) is retried with backoff; the
 * client heartbeats on its own meanwhile, so the group membership holds.
 *
 * The first group join has the start-up deadline. Afterwards the membership is supervised: if
 * its stream or a commit fails (a broker gone, a rebalance that invalidates a commit), or the
 * watchdog finds it stalled, the whole client is closed and a new one joins, with backoff,
 * reading from the committed offsets; nothing past them was committed, so nothing is lost.
 */
export async function runKafkaConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topic, dlqTopic, codec, log } = options
  const chunkSize = options.chunkSize ?? 5_000
  const chunkBytes = options.chunkBytes ?? 32 * 1024 * 1024
  const maxBackoffMs = options.maxBackoffMs ?? 5_000
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 10_000
  const memberOptions = { kafka, groupId, topic, instanceId: options.instanceId, sessionTimeoutMs }
  const watchdog = createWatchdog({
    kafka,
    groupId,
    topic,
    stallMs: options.stallTimeoutMs ?? 60_000,
    log,
  })
  const dlq = createReliableProducer(kafka, 'dead letters')
  const stopping = new AbortController()
  const steps = createConsumerSteps({
    groupId,
    codec,
    writer: coalesce(options.handler, { maxEvents: chunkSize, maxBytes: chunkBytes }),
    sendDeadLetters: (messages) =>
      dlq.send(
        messages.map((m) => ({
          topic: dlqTopic,
          key: m.key ?? undefined,
          value: m.value ?? Buffer.alloc(0),
          headers: toHeaderMap(m.headers),
        })),
      ),
    deadLetterUndecodable: options.deadLetterUndecodable ?? true,
    log,
    chunkSize,
    chunkBytes,
    maxBackoffMs,
    signal: stopping.signal,
    onAttempt: () => watchdog.progress(),
  })

  const handle = async (messages: KafkaMessage[], member: Member, continuity: OffsetContinuity) => {
    const byPartition = new Map<number, KafkaMessage[]>()
    for (const m of messages) {
      const list = byPartition.get(m.partition)
      if (list) list.push(m)
      else byPartition.set(m.partition, [m])
    }
    await Promise.all(
      [...byPartition].map(([partition, raw]) => {
        const first = (raw[0] as KafkaMessage).offset
        if (member.partitions().includes(partition) && !continuity.accepts(partition, first)) {
          // Messages between were read and not committed (a batch abandoned in a rebalance):
          // handling these and committing would skip them for good. Read again from the
          // committed offsets, with a new membership.
          member.abort(
            new Error(
              `${topic}/${partition}: the stream went on at ${first} while ${continuity.expected(partition)} was not committed; reading again from the committed offsets`,
            ),
          )
          return Promise.resolve()
        }
        const byOffset = new Map(raw.map((m) => [String(m.offset), m]))
        const batch: PartitionBatch = {
          topic,
          partition,
          messages: raw.map(toConsumed),
          alive: () => !stopping.signal.aborted && member.active() && member.partitions().includes(partition),
          commit: async (offset) => {
            const m = byOffset.get(offset)
            if (!m) throw new Error(`offset ${offset} is not in this batch`)
            // @platformatic/kafka defers a commit of a client out of its group until it joins
            // again, which may be never: such a commit fails here instead, and the member is
            // made anew.
            if (!member.active()) throw new Error(`not a member of group ${groupId}: commit refused`)
            await withDeadline(
              Promise.resolve(m.commit()),
              COMMIT_TIMEOUT_MS,
              `no answer to the commit of ${topic}/${partition}@${offset}`,
            )
            continuity.committed(partition, m.offset)
            watchdog.progress()
          },
        }
        return steps.handleBatch(batch)
      }),
    )
  }

  let member: Member | undefined
  let stopLag = () => {}
  try {
    await dlq.start()
    member = await untilKafkaAnswers(
      kafka,
      `join consumer group ${groupId}`,
      () => joinGroup(memberOptions),
      {
        attemptMs: joinTimeoutMs(sessionTimeoutMs) + 1_000,
      },
    )
  } catch (err) {
    await dlq.close().catch(() => {})
    throw err
  }
  watchdog.watch(member)
  watchdog.start()
  stopLag = reportLag(kafka, groupId, topic)

  const supervise = async () => {
    let backoff = 250
    while (!stopping.signal.aborted) {
      try {
        if (!member) {
          member = await joinGroup(memberOptions)
          watchdog.watch(member)
          log.info({ group: groupId, memberId: member.consumer.memberId }, 'kafka_consumer_joined')
        }
        const current: Member = member
        const continuity = offsetContinuity()
        // An aborted membership (the watchdog, stop) is left at once, even while a write hangs:
        // its batches are no longer alive, so nothing of them is committed.
        const ended = new Promise<void>((resolve) =>
          current.aborted.addEventListener('abort', () => resolve()),
        )
        for (;;) {
          const messages = await current.next(chunkSize, chunkBytes, options.lingerMs)
          if (!messages) break
          const handling = handle(messages, current, continuity)
          // Its failure after the membership ended has nobody left to tell.
          handling.catch(() => {})
          await Promise.race([handling, ended])
          backoff = 250
        }
        if (stopping.signal.aborted) return
        throw current.failure() ?? new Error('the message stream ended')
      } catch (err) {
        if (stopping.signal.aborted) return
        // The watchdog counted its own restarts (stalled, not_member).
        if (!(member?.failure() instanceof MemberStalled)) countRestart(groupId, 'failed')
        log.error({ err: describe(err), retryInMs: backoff }, 'kafka_consumer_restarting')
        await member?.close()
        member = undefined
        await abortableDelay(backoff, stopping.signal)
        backoff = Math.min(backoff * 2, maxBackoffMs)
      }
    }
  }
  const running = supervise()

  return {
    stats: steps.stats,
    readiness: watchdog.readiness,
    async stop() {
      stopping.abort()
      stopLag()
      member?.abort(new Error('stopping'))
      await running
      await watchdog.stop()
      await member?.close()
      await dlq.close()
    },
  }
}

function toConsumed(m: KafkaMessage): ConsumedMessage {
  const headers: MessageHeaders = {}
  for (const [k, v] of m.headerEntries) {
    const key = k.toString()
    const seen = headers[key]
    headers[key] = seen === undefined ? v : [...(Array.isArray(seen) ? seen : [seen]), v]
  }
  return { key: m.key ?? null, value: m.value ?? null, headers, offset: String(m.offset) }
}

/** Headers as the producer takes them; a repeated header stays repeated (distinct key buffers). */
function toHeaderMap(headers: MessageHeaders): Map<Buffer, Buffer> {
  const map = new Map<Buffer, Buffer>()
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) map.set(Buffer.from(key), Buffer.from(v))
  }
  return map
}
