import { withDeadline } from '../deadline.ts'
import type { Logger } from '../logger.ts'
import { counter, gauge } from '../metrics.ts'
import type { ReadinessCheck } from '../process/role.ts'
import { readGroupLag } from './consumer-lag.ts'
import type { KafkaConnection } from './kafka-connection.ts'
import type { Member } from './kafka-member.ts'
import { withAdmin } from './kafka-topics.ts'

const restarts = counter(
  'tally_consumer_restarts_total',
  'Group memberships given up and made anew: failed (the stream or a commit failed), stalled (lag and no progress), not_member (out of the group)',
  {
    labelNames: ['group', 'cause'],
  },
)

const watched = new Set<{ group: string; member: () => Member | undefined }>()
gauge(
  'tally_consumer_member',
  '1 while this process is an active member of the group (joined and heartbeating), else 0',
  {
    labelNames: ['group'],
    collect() {
      this.reset()
      for (const w of watched) this.set({ group: w.group }, w.member()?.active() ? 1 : 0)
    },
  },
)

/** Why the watchdog ended a membership. */
export class MemberStalled extends Error {}

export function countRestart(group: string, cause: 'failed' | 'stalled' | 'not_member'): void {
  restarts.inc({ group, cause })
}

export interface WatchdogOptions {
  kafka: KafkaConnection
  groupId: string
  topic: string
  /** How long a member may go without progress while messages wait on its partitions. */
  stallMs: number
  log: Logger
  /** The group's lag per partition (from the broker); readGroupLag unless a test says otherwise. */
  readLag?: () => Promise<Map<number, number>>
}

/**
 * Watches the consumer's current membership. Progress is a commit, or a write attempted (a
 * dependency that fails is the handler's trouble, which a new membership would not mend).
 * While messages wait on the member's partitions (lag from the broker) and nothing progresses
 * for `stallMs`, or the member has been out of its group that long, the membership is aborted:
 * the consumer makes a new one, and the log (`kafka_consumer_stalled`) and
 * `tally_consumer_restarts_total` say so.
 */
export function createWatchdog(options: WatchdogOptions) {
  const { kafka, groupId, topic, stallMs, log } = options
  const readLag = options.readLag ?? (() => readGroupLag(kafka, groupId, topic))
  let member: Member | undefined
  let lastProgress = Date.now()
  let lastActive = Date.now()
  /** Messages waiting on this member's partitions at the last look. */
  let waiting = 0
  let timer: NodeJS.Timeout | undefined
  let checking: Promise<void> | undefined
  const entry = { group: groupId, member: () => member }

  const stall = (m: Member, cause: 'stalled' | 'not_member', reason: string) => {
    log.warn({ group: groupId, reason }, 'kafka_consumer_stalled')
    countRestart(groupId, cause)
    m.abort(new MemberStalled(reason))
  }

  async function check(): Promise<void> {
    const m = member
    if (!m || m.aborted.aborted) return
    const now = Date.now()
    if (!m.active()) {
      if (now - lastActive > stallMs)
        stall(m, 'not_member', `out of group ${groupId} for ${Math.round((now - lastActive) / 1000)} s`)
      return
    }
    lastActive = now
    let lag: Map<number, number>
    try {
      lag = await readLag()
    } catch {
      return // the broker does not answer: nothing to judge by, and a new membership would not help
    }
    waiting = m.partitions().reduce((sum, p) => sum + (lag.get(p) ?? 0), 0)
    if (waiting === 0) lastProgress = Date.now()
    else if (Date.now() - lastProgress > stallMs && member === m)
      stall(
        m,
        'stalled',
        `no progress for ${Math.round((Date.now() - lastProgress) / 1000)} s with ${waiting} messages waiting`,
      )
  }

  return {
    /** The membership to watch from now on (a new one starts with a clean slate). */
    watch(m: Member): void {
      member = m
      lastProgress = Date.now()
      lastActive = Date.now()
      waiting = 0
    },
    /** Something moved: a commit, or a write attempted. */
    progress(): void {
      lastProgress = Date.now()
    },
    start(): void {
      watched.add(entry)
      const every = Math.max(100, Math.min(5_000, Math.floor(stallMs / 4)))
      timer = setInterval(() => {
        checking ??= check().finally(() => {
          checking = undefined
        })
      }, every)
      timer.unref()
    },
    async stop(): Promise<void> {
      clearInterval(timer)
      watched.delete(entry)
      await checking
    },
    /**
     * Ready while this process is a member the broker lists in the group, and not stalled (no
     * progress for half the stall time with messages waiting).
     */
    readiness: {
      name: `kafka group ${groupId}`,
      async check() {
        const m = member
        if (!m?.active()) throw new Error(`not a member of consumer group ${groupId}`)
        const listed = await withDeadline(
          withAdmin(kafka, (admin) => admin.describeGroups({ groups: [groupId] }), {
            retries: 0,
            requestTimeout: 2_000,
          }),
          2_500,
          `no answer from Kafka about group ${groupId}`,
        )
        const memberId = m.consumer.memberId
        if (!memberId || !listed.get(groupId)?.members.has(memberId))
          throw new Error(`the broker does not list this process in consumer group ${groupId}`)
        const still = Date.now() - lastProgress
        if (waiting > 0 && still > stallMs / 2)
          throw new Error(`no progress for ${Math.round(still / 1000)} s with ${waiting} messages waiting`)
      },
    } satisfies ReadinessCheck,
  }
}
