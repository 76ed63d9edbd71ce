import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { jsonExport, jsonSpan } from './client.ts'
import { bigExport, DEFAULT_MAX_SPANS, decoding, postTraces } from './decode-load.ts'

let tally: TestTally

beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally?.close())

describe('OTLP decoding runs off the event loop', () => {
  it('answers /livez while a large export is being decoded', async () => {
    const org = await tally.newOrg()
    const body = bigExport()
    expect(body.length).toBeGreaterThan(5_000_000)
    const order: string[] = []
    const big = postTraces(tally.url, org, body).then((res) => {
      order.push('otlp')
      return res
    })
    // The export is in a decoding thread: this process's own event loop is free to poll and answer.
    await waitFor(async () => (await decoding('running')) >= 1, { what: 'the export to be decoding' })
    const live = await fetch(`${tally.url}/livez`)
    order.push('livez')
    expect(live.status).toBe(200)
    expect((await big).status).toBe(200)
    expect(order).toEqual(['livez', 'otlp'])
  })

  it("decodes a second organization's export before the rest of a flooding organization's", async () => {
    const flooder = await tally.newOrg()
    const other = await tally.newOrg()
    const threads = await decoding('threads')
    expect(threads).toBeGreaterThanOrEqual(1)
    const body = bigExport()
    const order: string[] = []
    const flood = Array.from({ length: threads + 2 }, (_, i) =>
      postTraces(tally.url, flooder, body).then((res) => {
        order.push(`flood-${i}`)
        return res.status
      }),
    )
    await waitFor(async () => (await decoding('running')) === threads && (await decoding('waiting')) === 2, {
      what: 'every thread busy with the flood, two more of its exports waiting',
    })
    const small = JSON.stringify(jsonExport([jsonSpan({ attributes: { 'gen_ai.request.model': 'gpt-4o' } })]))
    const answered = await postTraces(tally.url, other, small, 'application/json')
    order.push('other')
    expect(answered.status).toBe(200)
    expect(await Promise.all(flood)).toEqual(flood.map(() => 200))
    // Its export took the first thread to come free: at most the running ones were answered before.
    expect(order.indexOf('other')).toBeLessThanOrEqual(threads)
    expect(order.slice(-1)[0]).not.toBe('other')
  })

  it('answers 413 for 10,001 spans before decoding any, naming the batch setting', async () => {
    const org = await tally.newOrg()
    const res = await postTraces(tally.url, org, bigExport(DEFAULT_MAX_SPANS + 1))
    expect(res.status).toBe(413)
    expect(((await res.json()) as { error: string }).error).toContain('OTEL_BSP_MAX_EXPORT_BATCH_SIZE')
  })

  it("exports the event loop's delay (p99) in /metrics", async () => {
    const text = await (await fetch(`${tally.url}/metrics`)).text()
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m)
  })
})
