import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { jsonExport, jsonSpan } from './client.ts'
import { bigExport, decoding, postTraces } from './decode-load.ts'

// The decoding pool as configured, not as the machine's cores make it (one thread on two cores):
// two threads, one export of an organization waiting, two in all.
let tally: TestTally

beforeAll(async () => {
  tally = await startTestTally({
    env: { TALLY_OTLP_DECODE_THREADS: '2', TALLY_OTLP_QUEUE_PER_ORG: '1', TALLY_OTLP_QUEUE: '2' },
  })
})
afterAll(() => tally?.close())

const small = () =>
  JSON.stringify(jsonExport([jsonSpan({ attributes: { 'gen_ai.request.model': 'gpt-4o' } })]))

describe('the OTLP decoding pool takes its bounds from the configuration', () => {
  it('runs the configured threads, and refuses past the per-organization and total queues', async () => {
    expect(await decoding('threads')).toBe(2)
    const [busy, second, third] = await Promise.all([tally.newOrg(), tally.newOrg(), tally.newOrg()])
    const body = bigExport()
    const taken = [postTraces(tally.url, busy, body), postTraces(tally.url, busy, body)]
    await waitFor(async () => (await decoding('running')) === 2, {
      what: 'two exports to take the two threads',
    })
    const waiting = postTraces(tally.url, busy, body)
    await waitFor(async () => (await decoding('waiting')) === 1, { what: 'a third export to wait' })

    // Its organization has one waiting: another is refused at once, naming the bound.
    const refused = await postTraces(tally.url, busy, small(), 'application/json')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(((await refused.json()) as { error: string }).error).toContain(
      'At most 1 OTLP exports of one organization wait to be decoded',
    )

    // Another organization may wait beside it, up to two in all; a third organization may not.
    const beside = postTraces(tally.url, second, small(), 'application/json')
    await waitFor(async () => (await decoding('waiting')) === 2, {
      what: "the second organization's export to wait",
    })
    const full = await postTraces(tally.url, third, small(), 'application/json')
    expect(full.status).toBe(503)
    expect(((await full.json()) as { error: string }).error).toContain('Too many OTLP exports are waiting')

    // What was taken is decoded and answered.
    expect((await Promise.all([...taken, waiting, beside])).map((r) => r.status)).toEqual([
      200, 200, 200, 200,
    ])
    expect(await decoding('waiting')).toBe(0)
  })
})

describe('TALLY_OTLP_DECODE_TIMEOUT', () => {
  // A deadline both exports stay far from on any machine, loaded or not: the large one takes
  // about 1.6 s to decode here (4× the deadline), the one-span one a few ms (a 100 ms deadline
  // was missed by it on a loaded machine: its answer waits for the event loop too).
  const SPANS = 60_000
  const DEADLINE_MS = 400
  let slow: TestTally
  beforeAll(async () => {
    slow = await startTestTally({
      env: {
        TALLY_OTLP_DECODE_TIMEOUT: `${DEADLINE_MS}ms`,
        TALLY_OTLP_MAX_SPANS: String(SPANS),
        TALLY_INTAKE_MAX_BYTES: String(64 * 1024 * 1024),
      },
    })
  })
  afterAll(() => slow?.close())

  it('answers 503 naming the batch setting when an export takes longer to decode, and decodes the next', async () => {
    const org = await slow.newOrg()
    const res = await postTraces(slow.url, org, bigExport(SPANS))
    expect(res.status).toBe(503)
    expect(((await res.json()) as { error: string }).error).toMatch(
      /took longer than 400 ms; send smaller batches \(OTEL_BSP_MAX_EXPORT_BATCH_SIZE\)/,
    )
    // The thread was replaced: a small export is decoded in time.
    expect((await postTraces(slow.url, org, small(), 'application/json')).status).toBe(200)
  })
})
