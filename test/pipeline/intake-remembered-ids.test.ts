import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { metric } from '../support/metrics.ts'
import { requestApi } from './client.ts'

// With every look-up of earlier copies failing (a deadline of 1 ms: what a loaded ClickHouse
// looks like to the intake), a re-send to the same API process still replaces its row: the
// process remembers the ids it published lately, with their first created_at.
describe('re-sent ids while the look-up fails', () => {
  let tally: TestTally
  let api: ReturnType<typeof requestApi>
  beforeAll(async () => {
    tally = await startTestTally({ env: { TALLY_INTAKE_LOOKUP_TIMEOUT: '1ms' } })
    api = requestApi(tally)
  })
  afterAll(() => tally?.close())

  it('replaces a re-sent id with another created_at, alone and in a batch, and never doubles', async () => {
    const org = await tally.newOrg()
    const id = randomUUID()
    const lookupsBefore =
      (await metric('tally_intake_lookup_failures_total', '{outcome="failed"}')) +
      (await metric('tally_intake_lookup_failures_total', '{outcome="skipped"}'))
    expect(
      (
        await api.log(org, {
          request_id: id,
          created_at: '2026-11-03T08:00:00Z',
          model: 'gpt-4o',
          status: 500,
        })
      ).status,
    ).toBe(201)
    // The first intake's look-up failed (nothing was stored yet anyway): the id is new.
    const lookupsAfterFirst =
      (await metric('tally_intake_lookup_failures_total', '{outcome="failed"}')) +
      (await metric('tally_intake_lookup_failures_total', '{outcome="skipped"}'))
    expect(lookupsAfterFirst).toBe(lookupsBefore + 1)
    // Re-sends: without created_at (now), in another month, twice in one batch.
    expect((await api.log(org, { request_id: id, model: 'gpt-4o', status: 502 })).status).toBe(201)
    const moved = { request_id: id, created_at: '2025-01-01T00:00:00Z', model: 'gpt-4o', status: 200 }
    expect((await api.log(org, moved)).status).toBe(201)
    expect((await api.log(org, [moved, { ...moved, status: 201 }])).status).toBe(201)

    expect(await api.count(org)).toBe(1)
    const q = await api.query(org)
    expect(q.data).toHaveLength(1)
    expect(q.data[0]).toMatchObject({ request_id: id, status: 201, created_at: '2026-11-03T08:00:00.000Z' })
  })

  it("does not take another organization's id for its own", async () => {
    const a = await tally.newOrg()
    const b = await tally.newOrg()
    const id = randomUUID()
    expect(
      (await api.log(a, { request_id: id, created_at: '2026-11-03T08:00:00Z', model: 'gpt-4o' })).status,
    ).toBe(201)
    expect(
      (await api.log(b, { request_id: id, created_at: '2026-11-04T09:00:00Z', model: 'gpt-4o' })).status,
    ).toBe(201)
    expect((await api.query(b)).data[0]).toMatchObject({
      request_id: id,
      created_at: '2026-11-04T09:00:00.000Z',
    })
    expect((await api.query(a)).data[0]).toMatchObject({
      request_id: id,
      created_at: '2026-11-03T08:00:00.000Z',
    })
  })
})
