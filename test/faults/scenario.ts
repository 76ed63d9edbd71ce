import { waitFor } from '../support/wait.ts'
import { type Cluster, type Org, startCluster, watchRss } from './cluster.ts'
import { type LoadOptions, tenantLoad } from './load.ts'
import { report } from './report.ts'

/**
 * The stage of every fault: the cluster, a calm tenant sending steadily to POST /v1/request/log
 * with a webhook on its events, and each process's memory watched. Starts once `warmup` events
 * of the calm tenant were acknowledged.
 */
export async function startScenario(env: Record<string, string>, calmLoad: LoadOptions, warmup: number) {
  const cluster: Cluster = await startCluster(env)
  const calm: Org = await cluster.newOrg()
  const calmHook = (await cluster.webhook(calm, false)).path
  const rss = watchRss(cluster)
  const load = tenantLoad(cluster.api, calm, calmLoad)
  await waitFor(() => load.acked().length >= warmup, {
    what: `${warmup} events acknowledged`,
    timeoutMs: 60_000,
  })

  /** Waits until every event in `ids` of `org` is stored once and delivered at `hook`; resolves with how long it took. */
  const caughtUp = async (org: Org, hook: string, ids: string[], timeoutMs: number) => {
    const from = Date.now()
    await waitFor(
      async () => {
        cluster.assertNoneExited()
        const stored = await cluster.storedCounts(org.organizationId)
        const delivered = cluster.deliveredAt(hook)
        return ids.every((id) => stored.get(id) === 1 && delivered.has(id))
      },
      { what: `all ${ids.length} acknowledged events stored once and delivered`, timeoutMs, intervalMs: 500 },
    )
    return Date.now() - from
  }

  return {
    cluster,
    calm,
    calmHook,
    load,
    rss,
    caughtUp,
    /** The calm tenant's events acknowledged so far, stored once and delivered. */
    calmCaughtUp: (timeoutMs: number) => caughtUp(calm, calmHook, load.acked(), timeoutMs),
    /**
     * Stops the calm tenant once everything it was acknowledged is stored and delivered; what
     * breaks "each acknowledged event stored exactly once, nothing stored that was not sent".
     */
    async finish(timeoutMs: number) {
      // Stopped first, so that a request still in flight is answered before the ids are taken:
      // one acknowledged after them would be counted below without having been waited for.
      await load.stop()
      await caughtUp(calm, calmHook, load.acked(), timeoutMs)
      const stored = await cluster.storedCounts(calm.organizationId)
      const attempted = load.attempted()
      report('memory', {
        'api peak RSS (MB)': Math.round(rss.peak.api),
        'ingest peak RSS (MB)': Math.round(rss.peak.ingest),
        'dispatcher peak RSS (MB)': Math.round(rss.peak.dispatcher),
      })
      return {
        acknowledged: load.acked().length,
        notStoredOnce: load.acked().filter((id) => stored.get(id) !== 1),
        storedUnsent: [...stored.keys()].filter((id) => !attempted.has(id)),
      }
    },
    async stop() {
      await load.stop()
      rss.stop()
      await cluster.stop()
    },
  }
}

export type Scenario = Awaited<ReturnType<typeof startScenario>>
