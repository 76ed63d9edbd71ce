import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs } from '../support/api.ts'
import { startTestTally, type TestTally } from '../support/harness.ts'

// Each webhook costs the dispatcher a decision for every event of its organization: how many an
// organization holds is its share of that work (docs/webhooks.md).
describe('webhooks per organization', () => {
  let tally: TestTally
  beforeAll(async () => {
    tally = await startTestTally({
      env: { TALLY_MAX_WEBHOOKS_PER_ORG: '3', TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    })
  })
  afterAll(() => tally?.close())

  const create = (api: ReturnType<typeof apiAs>, n: number) =>
    api.post('/v1/webhooks', { destination: `https://127.0.0.1:9/hook-${n}` })
  const FULL =
    'This organization already holds 3 webhooks, the most it may (TALLY_MAX_WEBHOOKS_PER_ORG); delete one first'

  it('refuses a webhook beyond the cap with 409 naming it, and takes one again after a deletion', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const ids: string[] = []
    for (const n of [1, 2, 3]) {
      const res = await create(api, n)
      expect(res.status, res.error ?? '').toBe(201)
      ids.push(res.data.id)
    }
    expect(await create(api, 4)).toEqual({ status: 409, data: null, error: FULL })
    expect((await api.get('/v1/webhooks')).data).toHaveLength(3)
    // Another organization has its own three.
    const other = apiAs(tally.app, await tally.newOrg())
    expect((await create(other, 1)).status).toBe(201)
    expect((await api.delete(`/v1/webhooks/${ids[0]}`)).status).toBe(200)
    expect((await create(api, 5)).status).toBe(201)
    expect((await create(api, 6)).status).toBe(409)
  })

  it('lets no two creations at once pass the cap together', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, n) => create(api, n)))
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409])
    const [{ n }] = (await tally.sql`
      select count(*)::int as n from webhooks where organization_id = ${org.organizationId}`) as unknown as [
      { n: number },
    ]
    expect(n).toBe(3)
  })
})
