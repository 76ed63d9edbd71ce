import { fork } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait.ts'
import type { Role } from './cluster.ts'
import { percentile, tenantLoad } from './load.ts'
import { report } from './report.ts'
import { type Scenario, startScenario } from './scenario.ts'

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
  let s: Scenario

  beforeAll(async () => {
    s = await startScenario(
      {
        // A killed dispatcher's claimed deliveries come due again after this.
        TALLY_WEBHOOK_CLAIM_TTL: '10s',
        // Flood limits: 1,200 requests, 30,000 events and 256 MiB a minute per organization.
        TALLY_RATE_LIMIT_PER_MINUTE: '1200',
        TALLY_RATE_LIMIT_EVENTS_PER_MINUTE: '30000',
        TALLY_RATE_LIMIT_BYTES_PER_MINUTE: String(256 * 1024 * 1024),
      },
      { perSecond: 10, events: 10 },
      200,
    )
  }, 240_000)
  afterAll(() => s?.stop())

  for (const role of ['ingest', 'dispatcher'] as Role[]) {
    it(`${role} kill -9, restarted at once with its instance id: its partitions are back in seconds, nothing lost or doubled`, async () => {
      const p = s.cluster.processes[role]
      const killed = Date.now()
      p.child.kill('SIGKILL')
      await p.exited
      expect(await s.cluster.ready(role)).toBe(0)
      await s.cluster.start(role)
      const started = Date.now()
      // Static membership: the restarted member takes its partitions back without waiting for
      // the dead one's session to end.
      await waitFor(async () => (await s.cluster.ready(role)) === 200, {
        what: `the restarted ${role} ready (a member, progressing)`,
        timeoutMs: 30_000,
        intervalMs: 100,
      })
      const readyAfter = Date.now() - killed
      await s.calmCaughtUp(CAUGHT_UP_WITHIN_MS)
      report(`${role} kill -9`, {
        'process start (s)': (started - killed) / 1000,
        'ready after the kill (s)': readyAfter / 1000,
        'caught up after the kill (s)': (Date.now() - killed) / 1000,
      })
      expect(readyAfter - (started - killed)).toBeLessThan(15_000)
    }, 120_000)
  }

  it('a tenant of one-megabyte events with an includeData webhook: stored and delivered, the calm tenant’s webhooks not held up, memory bounded', async () => {
    const big = await s.cluster.newOrg()
    const bigHook = (await s.cluster.webhook(big, true, true)).path
    // Three a second: what this pipeline sustains on a shared 2-core machine, where every
    // megabyte is parsed, encoded, stored and sent by five processes (api, Kafka, ingest,
    // ClickHouse, dispatcher and Postgres); faster, the backlog (and the calm tenant's wait
    // behind it in the partitions) grows for as long as the tenant keeps it up.
    const bigLoad = tenantLoad(s.cluster.api, big, {
      perSecond: 3,
      events: 1,
      bodyBytes: 1024 * 1024,
      maxInFlight: 16,
    })
    const from = Date.now()
    await waitFor(() => bigLoad.acked().length >= 60, {
      what: '60 one-megabyte events acknowledged',
      timeoutMs: 90_000,
    })
    bigLoad.pause()
    const until = Date.now()
    await s.caughtUp(big, bigHook, bigLoad.acked(), CAUGHT_UP_WITHIN_MS)
    await s.calmCaughtUp(CAUGHT_UP_WITHIN_MS)
    await bigLoad.stop()
    // The calm tenant's deliveries meanwhile: from its 201 to the receiver, per request id.
    const arrived = s.cluster.arrivals(s.calmHook)
    const lags = s.load.sent
      .filter((r) => r.ackedAt !== undefined && r.ackedAt >= from && r.ackedAt < until)
      .flatMap((r) => r.ids.map((id) => (arrived.get(id) ?? Number.NaN) - (r.ackedAt as number)))
    const bigDelivery = s.cluster.receiver.to(bigHook)[0]
    report('one-megabyte events, includeData', {
      'events acknowledged': bigLoad.acked().length,
      'calm webhook p50 (ms)': percentile(lags, 0.5),
      'calm webhook p99 (ms)': percentile(lags, 0.99),
      'ingest peak RSS (MB)': Math.round(s.rss.peak.ingest),
      'dispatcher peak RSS (MB)': Math.round(s.rss.peak.dispatcher),
    })
    // includeData: the delivery carries the megabyte body.
    expect(bigDelivery?.body.length).toBeGreaterThan(1024 * 1024)
    expect(lags.length).toBeGreaterThan(0)
    expect(lags.every((ms) => Number.isFinite(ms))).toBe(true)
    expect(percentile(lags, 0.99)).toBeLessThan(CALM_WEBHOOK_P99_MS)
    expect(s.rss.peak.ingest).toBeLessThan(RSS_BOUND_MB.ingest)
    expect(s.rss.peak.dispatcher).toBeLessThan(RSS_BOUND_MB.dispatcher)
  }, 180_000)

  it('a tenant flooding the intake from four keys (200 requests a second): 429 past its limits; the calm tenant’s intake and time to queryable stay within bounds', async () => {
    const measure = async (ms: number) => {
      const from = Date.now()
      await new Promise((resolve) => setTimeout(resolve, ms))
      const until = Date.now()
      const intake = s.load.attemptsBetween(from, until).filter((a) => a.status === 201)
      const ingested = await waitFor(
        async () => {
          const at = await s.cluster.ingestedAt(s.calm.organizationId)
          const window = s.load.sent.filter(
            (r) => r.ackedAt !== undefined && r.ackedAt >= from && r.ackedAt < until,
          )
          const lags = window.flatMap((r) =>
            r.ids.map((id) => (at.get(id) ?? Number.NaN) - (r.ackedAt as number)),
          )
          return lags.every((l) => Number.isFinite(l)) && lags
        },
        { what: 'the window’s events queryable', timeoutMs: 60_000, intervalMs: 500 },
      )
      return {
        attempts: s.load.attemptsBetween(from, until),
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
    const calmAlone = await measure(8_000)
    const flooder = await s.cluster.newOrg()
    const keys = [flooder.headers]
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${s.cluster.api}/v1/api-keys`, {
        method: 'POST',
        headers: { ...flooder.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `flood-${i}` }),
      })
      const { data } = (await res.json()) as { data: { api_key: string } }
      keys.push({ authorization: `Bearer ${data.api_key}` })
    }
    // The flood comes from a process of its own: its work must not slow the calm tenant's client.
    const flood = fork(new URL('./flood.ts', import.meta.url).pathname, [], {
      env: {
        ...process.env,
        FLOOD_URL: s.cluster.api,
        FLOOD_KEYS: JSON.stringify(keys.map((k) => k.authorization)),
        FLOOD_RATE: '200',
        FLOOD_SECONDS: '12',
      },
      stdio: 'ignore',
    })
    const flooded = new Promise<{ statuses: Record<string, number>; requests: number }>((resolve, reject) => {
      flood.once('message', (m) => resolve(m as { statuses: Record<string, number>; requests: number }))
      flood.once('exit', (code) => reject(new Error(`the flood process exited ${code} before reporting`)))
    })
    const withFlood = await measure(12_000)
    const { statuses, requests } = await flooded
    const accepted = (statuses['201'] ?? 0) * 100
    report('flood', {
      'flood requests': requests,
      'flood 429': statuses['429'] ?? 0,
      'flood events accepted': accepted,
      'calm intake p99 alone (ms)': calmAlone.intakeP99,
      'calm intake p99 with flood (ms)': withFlood.intakeP99,
      'calm queryable p99 alone (ms)': calmAlone.queryableP99,
      'calm queryable p99 with flood (ms)': withFlood.queryableP99,
      'intake p99 ratio (target 1.5)': withFlood.intakeP99 / calmAlone.intakeP99,
      'queryable p99 ratio (target 1.5)': withFlood.queryableP99 / calmAlone.queryableP99,
    })
    // The organization's limits, not its keys', hold the flood: 30,000 events a minute in all
    // (two minutes' worth when the window turns during the flood).
    expect(statuses['429'] ?? 0).toBeGreaterThan(requests / 2)
    expect(accepted).toBeLessThanOrEqual(2 * 30_000)
    // The calm tenant is not refused: every intake it sent during the flood was accepted, and
    // (above) every event of it became queryable. How fast, beside the calm tenant alone, is what
    // the report prints and `npm run bench:fairness` measures on a quiet machine: a timed
    // assertion here would judge the machine's other load, not Tally.
    expect(withFlood.attempts.length).toBeGreaterThan(0)
    expect(withFlood.attempts.filter((a) => a.status !== 201)).toEqual([])
  }, 180_000)

  it('over all of it: each acknowledged calm event stored exactly once, nothing stored that was not sent, memory within bounds', async () => {
    const { notStoredOnce, storedUnsent } = await s.finish(CAUGHT_UP_WITHIN_MS)
    expect(notStoredOnce).toEqual([])
    expect(storedUnsent).toEqual([])
    expect(s.rss.peak.api).toBeLessThan(RSS_BOUND_MB.api)
  }, 120_000)
})
