import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.ts'
import { type Cluster, type Org, type Role, startCluster, watchRss } from './cluster.ts'
import { percentile, tenantLoad } from './load.ts'
import { report } from './report.ts'

// Consumer processes killed (kill -9) and restarted as a supervisor would, a tenant whose events
// are one megabyte each with an includeData webhook, and a tenant that floods the intake — each
// while a calm tenant sends 10 requests of 10 events a second with a webhook. After each,
// every acknowledged event is stored once and delivered within the stated time, and the calm
// tenant is served within the stated bounds.

const CAUGHT_UP_WITHIN_MS = 60_000
/** The calm tenant's webhooks, from its 201 to its receiver, while the one-megabyte tenant sends. */
const CALM_WEBHOOK_P99_MS = 30_000
const RSS_BOUND_MB = { api: 1_200, ingest: 800, dispatcher: 800 }

describe('consumer processes killed, and heavy tenants', () => {
  let cluster: Cluster
  let calm: Org
  let calmHook: string
  let load: ReturnType<typeof tenantLoad>
  let rss: ReturnType<typeof watchRss>

  beforeAll(async () => {
    cluster = await startCluster({
      // A killed dispatcher's claimed deliveries come due again after this.
      TALLY_WEBHOOK_CLAIM_TTL: '10s',
      // Flood limits: 1,200 requests, 30,000 events and 256 MiB a minute per organization.
      TALLY_RATE_LIMIT_PER_MINUTE: '1200',
      TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: '30000',
      TALLY_RATE_LIMIT_BYTES_PER_MINUTE: String(256 * 1024 * 1024),
    })
    calm = await cluster.newOrg()
    calmHook = (await cluster.webhook(calm, false)).path
    rss = watchRss(cluster)
    load = tenantLoad(cluster.api, calm, { perSecond: 10, events: 10 })
    await waitFor(() => load.acked().length >= 200, { what: '200 events acknowledged', timeoutMs: 60_000 })
  }, 240_000)

  afterAll(async () => {
    await load?.stop()
    rss?.stop()
    await cluster?.stop()
  })

  const caughtUp = async (org: Org, hook: string, ids: string[], timeoutMs: number) => {
    await waitFor(
      async () => {
        const stored = await cluster.storedCounts(org.organizationId)
        const delivered = cluster.deliveredAt(hook)
        return ids.every((id) => stored.get(id) === 1 && delivered.has(id))
      },
      { what: `all ${ids.length} acknowledged events stored once and delivered`, timeoutMs, intervalMs: 500 },
    )
  }

  for (const role of ['ingest', 'dispatcher'] as Role[]) {
    it(`${role} kill -9, restarted at once with its instance id: its partitions are back in seconds, nothing lost or doubled`, async () => {
      const p = cluster.processes[role]
      const killed = Date.now()
      p.child.kill('SIGKILL')
      await p.exited
      expect(await cluster.ready(role)).toBe(0)
      await cluster.start(role)
      const started = Date.now()
      // Static membership: the restarted member takes its partitions back without waiting for
      // the dead one's session to end.
      await waitFor(async () => (await cluster.ready(role)) === 200, {
        what: `the restarted ${role} ready (a member, progressing)`,
        timeoutMs: 30_000,
        intervalMs: 100,
      })
      const readyAfter = Date.now() - killed
      await caughtUp(calm, calmHook, load.acked(), CAUGHT_UP_WITHIN_MS)
      report(`${role} kill -9`, {
        'process start (s)': (started - killed) / 1000,
        'ready after the kill (s)': readyAfter / 1000,
        'caught up after the kill (s)': (Date.now() - killed) / 1000,
      })
      expect(readyAfter - (started - killed)).toBeLessThan(15_000)
    }, 120_000)
  }

  it('a tenant of one-megabyte events with an includeData webhook: stored and delivered, the calm tenant’s webhooks not held up, memory bounded', async () => {
    const big = await cluster.newOrg()
    const bigHook = (await cluster.webhook(big, true, true)).path
    // Three a second: what this pipeline sustains on a shared 2-core machine, where every
    // megabyte is parsed, encoded, stored and sent by five processes (api, Kafka, ingest,
    // ClickHouse, dispatcher and Postgres); faster, the backlog (and the calm tenant's wait
    // behind it in the partitions) grows for as long as the tenant keeps it up.
    const bigLoad = tenantLoad(cluster.api, big, {
      perSecond: 3,
      events: 1,
      bodyBytes: 1024 * 1024,
      maxInFlight: 16,
    })
    const from = Date.now()
    await waitFor(() => bigLoad.acked().length >= 90, {
      what: '90 one-megabyte events acknowledged',
      timeoutMs: 90_000,
    })
    bigLoad.pause()
    const until = Date.now()
    await caughtUp(big, bigHook, bigLoad.acked(), CAUGHT_UP_WITHIN_MS)
    await caughtUp(calm, calmHook, load.acked(), CAUGHT_UP_WITHIN_MS)
    await bigLoad.stop()
    // The calm tenant's deliveries meanwhile: from its 201 to the receiver, per request id.
    const arrived = cluster.arrivals(calmHook)
    const lags = load.sent
      .filter((s) => s.ackedAt !== undefined && s.ackedAt >= from && s.ackedAt < until)
      .flatMap((s) => s.ids.map((id) => (arrived.get(id) ?? Number.NaN) - (s.ackedAt as number)))
    const bigDelivery = cluster.receiver.to(bigHook)[0]
    report('one-megabyte events, includeData', {
      'events acknowledged': bigLoad.acked().length,
      'calm webhook p50 (ms)': percentile(lags, 0.5),
      'calm webhook p99 (ms)': percentile(lags, 0.99),
      'ingest peak RSS (MB)': Math.round(rss.peak.ingest),
      'dispatcher peak RSS (MB)': Math.round(rss.peak.dispatcher),
    })
    // includeData: the delivery carries the megabyte body.
    expect(bigDelivery?.body.length).toBeGreaterThan(1024 * 1024)
    expect(lags.length).toBeGreaterThan(0)
    expect(lags.every((ms) => Number.isFinite(ms))).toBe(true)
    expect(percentile(lags, 0.99)).toBeLessThan(CALM_WEBHOOK_P99_MS)
    expect(rss.peak.ingest).toBeLessThan(RSS_BOUND_MB.ingest)
    expect(rss.peak.dispatcher).toBeLessThan(RSS_BOUND_MB.dispatcher)
  }, 180_000)

  it('a tenant flooding the intake from four keys: 429 past its limits; the calm tenant’s intake and time to queryable stay within bounds', async () => {
    const measure = async (ms: number) => {
      const from = Date.now()
      await new Promise((resolve) => setTimeout(resolve, ms))
      const until = Date.now()
      const intake = load.attemptsBetween(from, until).filter((a) => a.status === 201)
      const ingested = await waitFor(
        async () => {
          const at = await cluster.ingestedAt(calm.organizationId)
          const window = load.sent.filter(
            (s) => s.ackedAt !== undefined && s.ackedAt >= from && s.ackedAt < until,
          )
          const lags = window.flatMap((s) =>
            s.ids.map((id) => (at.get(id) ?? Number.NaN) - (s.ackedAt as number)),
          )
          return lags.every((l) => Number.isFinite(l)) && lags
        },
        { what: 'the window’s events queryable', timeoutMs: 60_000, intervalMs: 500 },
      )
      return {
        intakeP99: percentile(
          intake.map((a) => a.ms),
          0.99,
        ),
        queryableP99: percentile(
          ingested.map((l) => Math.max(0, l)),
          0.99,
        ),
      }
    }
    // A measured window of calm traffic alone, then the same with the flood.
    const calmAlone = await measure(10_000)
    const flooder = await cluster.newOrg()
    const keys = [flooder.headers]
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${cluster.api}/v1/api-keys`, {
        method: 'POST',
        headers: { ...flooder.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `flood-${i}` }),
      })
      const { data } = (await res.json()) as { data: { api_key: string } }
      keys.push({ authorization: `Bearer ${data.api_key}` })
    }
    const floods = keys.map((headers) =>
      tenantLoad(
        cluster.api,
        { ...flooder, headers },
        { perSecond: 50, events: 100, retry: false, maxInFlight: 8 },
      ),
    )
    const withFlood = await measure(15_000)
    await Promise.all(floods.map((f) => f.stop()))
    const floodAttempts = floods.flatMap((f) => f.attemptsBetween(0))
    const accepted = floods.reduce((n, f) => n + f.acked().length, 0)
    report('flood', {
      'flood attempts': floodAttempts.length,
      'flood 429': floodAttempts.filter((a) => a.status === 429).length,
      'flood events accepted': accepted,
      'calm intake p99 alone (ms)': calmAlone.intakeP99,
      'calm intake p99 with flood (ms)': withFlood.intakeP99,
      'calm queryable p99 alone (ms)': calmAlone.queryableP99,
      'calm queryable p99 with flood (ms)': withFlood.queryableP99,
    })
    // The organization's limits, not its keys', hold the flood: 30,000 events a minute in all
    // (two minutes' worth when the window turns during the flood).
    expect(floodAttempts.filter((a) => a.status === 429).length).toBeGreaterThan(0)
    expect(accepted).toBeLessThanOrEqual(2 * 30_000)
    // Generous bounds on a shared machine (the 1.5× target is measured by bench/flood.ts).
    expect(withFlood.intakeP99).toBeLessThan(3 * calmAlone.intakeP99 + 100)
    expect(withFlood.queryableP99).toBeLessThan(3 * calmAlone.queryableP99 + 1_000)
  }, 180_000)

  it('over all of it: each acknowledged calm event stored exactly once, memory within bounds', async () => {
    load.pause()
    await caughtUp(calm, calmHook, load.acked(), CAUGHT_UP_WITHIN_MS)
    await load.stop()
    const stored = await cluster.storedCounts(calm.organizationId)
    for (const id of load.acked()) expect(stored.get(id)).toBe(1)
    const attempted = load.attempted()
    for (const id of stored.keys()) expect(attempted.has(id)).toBe(true)
    report('memory', {
      'api peak RSS (MB)': Math.round(rss.peak.api),
      'ingest peak RSS (MB)': Math.round(rss.peak.ingest),
      'dispatcher peak RSS (MB)': Math.round(rss.peak.dispatcher),
    })
    expect(rss.peak.api).toBeLessThan(RSS_BOUND_MB.api)
  }, 120_000)
})
