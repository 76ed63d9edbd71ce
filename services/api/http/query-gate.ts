import { type FairShare, withEnginePriority } from '../../shared/clickhouse/priority.ts'
import { AppError } from '../../shared/errors.ts'
import { counter } from '../../shared/metrics.ts'

const refused = counter(
  'tally_query_gate_refused_total',
  'Queries answered 429: their organization already ran its share of queries at once for too long',
)

/**
 * At most `perOrganization` queries of one organization run at once in this process (ClickHouse
 * work, and the JavaScript work of reading and answering them, which shares one thread with every
 * other organization). The others wait their turn, in order, for up to `waitMs`; then 429.
 * With `fairShare`, each admitted query runs at the engine priority its organization's recent use
 * earns (clickhouse/priority.ts), and its time counts until the server is done with it.
 */
export function createQueryGate(perOrganization: number, waitMs: number, fairShare?: FairShare) {
  const running = new Map<string, number>()
  const waiting = new Map<string, (() => void)[]>()

  function enter(organizationId: string): Promise<void> {
    const n = running.get(organizationId) ?? 0
    if (n < perOrganization) {
      running.set(organizationId, n + 1)
      return Promise.resolve()
    }
    const queue = waiting.get(organizationId) ?? []
    waiting.set(organizationId, queue)
    return new Promise((resolve, reject) => {
      const admit = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(admit), 1)
        if (queue.length === 0) waiting.delete(organizationId)
        refused.inc()
        reject(
          new AppError(
            429,
            'too_many_queries',
            `This organization already runs ${perOrganization} queries at once; retry when one has finished`,
          ),
        )
      }, waitMs)
      queue.push(admit)
    })
  }

  function leave(organizationId: string): void {
    const queue = waiting.get(organizationId)
    const next = queue?.shift()
    if (next) {
      // The slot passes to the next in line: the running count stays.
      if (queue?.length === 0) waiting.delete(organizationId)
      next()
      return
    }
    const n = (running.get(organizationId) ?? 1) - 1
    if (n === 0) running.delete(organizationId)
    else running.set(organizationId, n)
  }

  return {
    /**
     * Runs `work` in one of the organization's slots. `work` may `hold` the slot past its own end
     * until a promise settles (a server query that outlives its answer): the caller has its
     * answer, the organization still counts the query as running.
     */
    async run<T>(
      organizationId: string,
      work: (hold: (until: Promise<unknown>) => void) => Promise<T>,
    ): Promise<T> {
      await enter(organizationId)
      const share = fairShare?.start(organizationId)
      const done = () => {
        share?.end()
        leave(organizationId)
      }
      const held: Promise<unknown>[] = []
      try {
        const admitted = () => work((until) => void held.push(until))
        return await (share ? withEnginePriority(share.priority, admitted) : admitted())
      } finally {
        if (held.length === 0) done()
        else void Promise.allSettled(held).then(done)
      }
    },
  }
}

export type QueryGate = ReturnType<typeof createQueryGate>
