import {
  Consumer,
  type Message,
  type MessagesStream,
  MessagesStreamFallbackModes,
  MessagesStreamModes,
} from '@platformatic/kafka'
import { withDeadline } from '../deadline.ts'
import { clientOptions, type KafkaConnection } from './kafka-connection.ts'
import { TOPIC_MAX_MESSAGE_BYTES } from './kafka-topics.ts'

export type KafkaMessage = Message<Buffer, Buffer, Buffer, Buffer>
type Stream = MessagesStream<Buffer, Buffer, Buffer, Buffer>

/** How one membership of a consumer group is made: the group, its topic, and the group's timeouts. */
export interface MemberOptions {
  kafka: KafkaConnection
  groupId: string
  topic: string
  /** Static membership (KIP-345): a restarted member with this id takes its partitions back at once. */
  instanceId?: string | undefined
  sessionTimeoutMs: number
}

/**
 * One membership of the consumer group: a client of its own, joined, and its message stream.
 * A membership that failed is closed and never reused; the next one is a fresh client. (Reusing
 * the client of @platformatic/kafka 2.12.1 after a failed join leaves it outside the group for
 * good: see docs/operations.md, "Why a failed membership is never reused".)
 */
export interface Member {
  readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  /** The partitions of the topic the group gave this member. */
  partitions(): number[]
  /** The member as the client sees it: joined, heartbeating, and not given up. */
  active(): boolean
  /**
   * The messages ready now, at most `maxMessages` and (after the first) `maxBytes` of keys and
   * values, waiting for the first one; null once the membership ended (closed or failed). With
   * `lingerMs`, a batch short of the maximum waits for more until `lingerMs` after the last one
   * was handed on: batches at most that often, and no wait after a quiet spell or a slower write.
   */
  next(maxMessages: number, maxBytes: number, lingerMs?: number): Promise<KafkaMessage[] | null>
  /** Why the membership ended, once it did. */
  failure(): unknown
  /** Ends the membership at once: `next` answers null, the batch in hand is no longer alive. */
  abort(reason: Error): void
  readonly aborted: AbortSignal
  /** Closes the stream and the client, each within a deadline (a broker that hangs is left behind). */
  close(): Promise<void>
}

const CLOSE_TIMEOUT_MS = 5_000

/** How long a join may take: a rebalance waits for every member, a dead one until its session ends. */
export const joinTimeoutMs = (sessionTimeoutMs: number) => 3 * sessionTimeoutMs + 10_000

/**
 * Joins the group with a new client and opens its stream from the committed offsets. Rejects,
 * the client closed, when the join fails or takes longer than `joinTimeoutMs`.
 */
export async function joinGroup(options: MemberOptions): Promise<Member> {
  const { kafka, groupId, topic, sessionTimeoutMs } = options
  const consumer = new Consumer({
    ...clientOptions(kafka),
    groupId,
    ...(options.instanceId ? { groupInstanceId: options.instanceId } : {}),
    autocommit: false,
    maxBytesPerPartition: TOPIC_MAX_MESSAGE_BYTES,
    maxBytes: 2 * TOPIC_MAX_MESSAGE_BYTES,
    // Let a fetch fill up a little: fewer, larger inserts, for at most 100 ms more latency.
    minBytes: 256 * 1024,
    maxWaitTime: 100,
    // The stream fetches again once fewer messages than this are buffered: with a small mark
    // what is held is about one fetch (≤ maxBytes) beside the batch being handled, whatever
    // the size of the events (a mark of 5,000 held 5,000 one-megabyte events).
    highWaterMark: 16,
    sessionTimeout: sessionTimeoutMs,
    rebalanceTimeout: 2 * sessionTimeoutMs,
    heartbeatInterval: Math.max(100, Math.floor(sessionTimeoutMs / 10)),
  })
  const joining = consumer.consume({
    topics: [topic],
    mode: MessagesStreamModes.COMMITTED,
    fallbackMode: MessagesStreamFallbackModes.EARLIEST,
    autocommit: false,
  }) as Promise<Stream>
  let stream: Stream
  try {
    stream = await withDeadline(
      joining,
      joinTimeoutMs(sessionTimeoutMs),
      `no answer to joining group ${groupId}`,
    )
  } catch (err) {
    // A join answered after its deadline opens a stream nobody reads: close it with the client.
    void joining.then(
      (late) => late.close(),
      () => {},
    )
    await closeQuietly(consumer)
    throw err
  }
  return member(consumer, stream, topic)
}

function member(consumer: Consumer<Buffer, Buffer, Buffer, Buffer>, stream: Stream, topic: string): Member {
  const aborting = new AbortController()
  let failure: unknown
  // When `next` last handed on a batch: a linger is counted from it.
  let handedAt = 0
  // The 'readable' listener stays for the stream's life: @platformatic/kafka fetches only while
  // someone listens (a stream whose readableFlowing is back to null is never fetched again).
  let wake: (() => void) | undefined
  const notify = () => {
    const waiting = wake
    wake = undefined
    waiting?.()
  }
  stream.on('readable', notify).on('end', notify).on('close', notify)
  const fail = (err: unknown) => {
    failure ??= err
    notify()
  }
  stream.on('error', fail)
  // The client emits 'error' when a rejoin after a lost heartbeat fails (the coordinator gone,
  // or the client closed while it retried): an event nobody listened to would throw out of the
  // library's callback and end the process. It ends this membership; the caller makes a new one.
  consumer.on('error', fail)
  aborting.signal.addEventListener('abort', notify, { once: true })

  return {
    consumer,
    partitions: () => consumer.assignments?.find((a) => a.topic === topic)?.partitions ?? [],
    active: () =>
      failure === undefined && !aborting.signal.aborted && !stream.destroyed && consumer.isActive(),
    failure: () =>
      failure ?? stream.errored ?? (aborting.signal.aborted ? aborting.signal.reason : undefined),
    aborted: aborting.signal,
    abort(reason) {
      failure ??= reason
      aborting.abort(reason)
    },
    async next(maxMessages, maxBytes, lingerMs = 0) {
      const out: KafkaMessage[] = []
      let bytes = 0
      // Counted from the last batch handed on, not from now: after a quiet spell, or a write that
      // took longer than the linger, what is ready goes on at once.
      const until = handedAt + lingerMs
      const handOn = () => {
        handedAt = Date.now()
        return out
      }
      for (;;) {
        if (aborting.signal.aborted) return null
        while (out.length < maxMessages && (out.length === 0 || bytes < maxBytes)) {
          const m: KafkaMessage | null = stream.read()
          if (m === null) break
          out.push(m)
          bytes += (m.value?.length ?? 0) + (m.key?.length ?? 0)
        }
        if (out.length > 0 && (out.length >= maxMessages || bytes >= maxBytes || Date.now() >= until))
          return handOn()
        if (stream.errored) failure ??= stream.errored
        if (failure !== undefined || stream.destroyed || stream.readableEnded)
          return out.length > 0 ? handOn() : null
        let timer: NodeJS.Timeout | undefined
        await new Promise<void>((resolve) => {
          wake = resolve
          if (out.length > 0) timer = setTimeout(notify, until - Date.now())
        })
        clearTimeout(timer)
      }
    },
    async close() {
      aborting.abort(new Error('membership closed'))
      await withDeadline(stream.close(), CLOSE_TIMEOUT_MS, 'no end of the message stream').catch(() => {})
      await closeQuietly(consumer)
    },
  }
}

/** Closes a client (leaving its group if the broker answers) within a deadline; never rejects. */
async function closeQuietly(consumer: Consumer<Buffer, Buffer, Buffer, Buffer>): Promise<void> {
  // A rejoin still retrying when the client closes fails from inside `close`: never an error here.
  if (consumer.listenerCount('error') === 0) consumer.on('error', () => {})
  try {
    await withDeadline(consumer.close(true), CLOSE_TIMEOUT_MS, 'no end of the consumer')
  } catch {
    // Given up within the deadline: a broker that does not answer leaves this client behind.
  }
}
