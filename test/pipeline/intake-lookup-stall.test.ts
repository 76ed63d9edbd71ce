import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadPriceTable } from '../../services/api/requests/prices.ts'
import { createRequestRepo } from '../../services/api/requests/repo.ts'
import { createIntake } from '../../services/api/requests/service.ts'
import { type ClickHouseHandle, openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { queryLimits } from '../../services/shared/clickhouse/query-limits.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { loadEventCodec } from '../../services/shared/events/codec.ts'
import { requestEvents } from '../../services/shared/events/event.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { createInProcessPublisher } from '../../services/shared/events/transport.ts'
import { insertEvents, openMigratedClickHouse } from '../support/clickhouse.ts'
import { sampleEvent } from '../support/events.ts'
import { clickhouseEnv } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'
import { tcpProxy } from '../support/tcp-proxy.ts'
import { waitFor } from '../support/wait.ts'

// The intake's look-up of earlier copies of caller-supplied ids reads ClickHouse on the write
// path: a ClickHouse that hangs must cost it a short, bounded wait once, not every request.
describe('the intake while ClickHouse hangs', () => {
  const log = pino({ level: 'silent' })
  let direct: ClickHouseHandle
  let proxied: ClickHouseHandle
  let proxy: Awaited<ReturnType<typeof tcpProxy>>
  const published: RequestEvent[] = []
  let intake: ReturnType<typeof createIntake>

  beforeAll(async () => {
    direct = await openMigratedClickHouse()
    const url = new URL(clickhouseEnv().CLICKHOUSE_URL)
    proxy = await tcpProxy({ host: url.hostname, port: Number(url.port) })
    url.port = String(proxy.port)
    const config = loadConfig({ ...clickhouseEnv(), CLICKHOUSE_URL: url.toString() })
    proxied = await openClickHouse(config, log)
    // The events go to a handler that collects them (and to ClickHouse directly): only the
    // look-up goes through the proxy.
    const publisher = createInProcessPublisher(await loadEventCodec(), [
      {
        name: 'collect',
        async handle(events) {
          published.push(...requestEvents(events))
          await insertEvents(direct, requestEvents(events))
        },
      },
    ])
    intake = createIntake({
      repo: createRequestRepo(proxied.client, queryLimits(config)),
      publisher,
      prices: loadPriceTable(),
      log,
      lookupTimeoutMs: 300,
      countEvents: async () => {},
    })
  })
  afterAll(async () => {
    proxy.resume()
    await proxied?.close()
    await direct?.close()
    await proxy?.close()
  })

  const send = (org: string, id: string, createdAt: number) =>
    intake(org, [{ request_id: id, model: 'gpt-4o', created_at: createdAt, status: 200, cached: false }])
  const createdAtOf = (id: string) => published.findLast((e) => e.request_id === id)?.created_at.getTime()
  /** A row stored by another process: only the look-up can tell this intake its time. */
  const storedElsewhere = async (org: string, createdAt: number) => {
    const event = sampleEvent({ organization_id: org, created_at: new Date(createdAt) })
    await insertEvents(direct, [event])
    return event.request_id
  }

  it('answers within the look-up deadline, then skips the look-up for a while; once ClickHouse answers, re-sent ids keep their first time again', async () => {
    const org = randomUUID()
    const first = Date.parse('2026-11-01T10:00:00Z')
    // Answering: a re-send with another time keeps the stored one.
    const elsewhere = await storedElsewhere(org, first)
    await waitFor(
      async () => {
        await send(org, elsewhere, first + 60_000)
        return createdAtOf(elsewhere) === first
      },
      // A look-up slower than its deadline on a loaded machine pauses look-ups for 5 s.
      { what: 'the stored row seen by the look-up', timeoutMs: 20_000, intervalMs: 500 },
    )
    // An id this intake published itself, to re-send while ClickHouse hangs.
    const own = randomUUID()
    await send(org, own, first)

    proxy.pause()
    const failedBefore = await metric('tally_intake_lookup_failures_total', '{outcome="failed"}')
    const skippedBefore = await metric('tally_intake_lookup_failures_total', '{outcome="skipped"}')
    const started = Date.now()
    await send(org, randomUUID(), first)
    const stalled = Date.now() - started
    expect(stalled).toBeGreaterThanOrEqual(290)
    expect(stalled).toBeLessThan(2_000)
    expect(await metric('tally_intake_lookup_failures_total', '{outcome="failed"}')).toBe(failedBefore + 1)
    for (let i = 0; i < 5; i++) await send(org, randomUUID(), first)
    // No look-up at all now: each of the five skipped it (and none waited on it and failed).
    expect(await metric('tally_intake_lookup_failures_total', '{outcome="skipped"}')).toBe(skippedBefore + 5)
    expect(await metric('tally_intake_lookup_failures_total', '{outcome="failed"}')).toBe(failedBefore + 1)
    // Meanwhile an id this process published is re-sent with another time: remembered, it keeps
    // its first time without a look-up (neither waited on nor skipped).
    await send(org, own, first + 60_000)
    expect(createdAtOf(own)).toBe(first)
    expect(await metric('tally_intake_lookup_failures_total', '{outcome="skipped"}')).toBe(skippedBefore + 5)

    proxy.resume()
    // Each try with a row of its own: a re-send accepted while look-ups are paused is remembered
    // with the time it was published with.
    await waitFor(
      async () => {
        const later = await storedElsewhere(org, first)
        await send(org, later, first + 120_000)
        return createdAtOf(later) === first
      },
      { what: 'look-ups again once ClickHouse answers', timeoutMs: 20_000, intervalMs: 500 },
    )
  }, 40_000)
})
