import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiAs, type Caller } from '../support/api.ts'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startTestTally()
})
afterAll(() => tally?.close())

const LAST_ADMIN_KEY = 'id: the last admin key of an organization cannot be deleted'

interface Key extends Caller {
  id: string
}

/** The organization's first admin key and `more` admin keys issued with it. */
async function adminKeys(org: TestOrg, more: number): Promise<Key[]> {
  const api = apiAs(tally.app, org)
  const [first] = (await api.get('/v1/api-keys')).data as { id: string }[]
  const keys: Key[] = [{ id: (first as { id: string }).id, headers: org.headers }]
  for (let i = 0; i < more; i++) {
    const res = await api.post('/v1/api-keys', { name: `admin-${i}`, role: 'admin' })
    expect(res.status).toBe(201)
    keys.push({ id: res.data.id, headers: { authorization: `Bearer ${res.data.api_key}` } })
  }
  // Each key authenticated once, so every deletion below gets past authentication at once.
  for (const key of keys) expect((await apiAs(tally.app, key).get('/v1/api-keys')).status).toBe(200)
  return keys
}

const storedAdminKeys = async (org: TestOrg) =>
  (
    await tally.sql`
      select id from api_keys where organization_id = ${org.organizationId} and role = 'admin'`
  ).map((row) => row.id as string)

describe('the last admin key', () => {
  it('survives two admin keys deleting each other at once: one deletion wins, the other is 409', async () => {
    for (let round = 0; round < 40; round++) {
      const org = await tally.newOrg()
      const [a, b] = (await adminKeys(org, 1)) as [Key, Key]
      const answers = await Promise.all([
        apiAs(tally.app, a).delete(`/v1/api-keys/${b.id}`),
        apiAs(tally.app, b).delete(`/v1/api-keys/${a.id}`),
      ])
      const statuses = answers.map((answer) => answer.status)
      expect([...statuses].sort()).toEqual([200, 409])
      const refused = answers.find((answer) => answer.status === 409)
      expect(refused).toEqual({ status: 409, data: null, error: LAST_ADMIN_KEY })
      // The key that was refused is the one left.
      expect(await storedAdminKeys(org)).toEqual([statuses[0] === 409 ? b.id : a.id])
    }
  })

  it('survives a ring of admin keys each deleting the next at once', async () => {
    for (let round = 0; round < 10; round++) {
      const org = await tally.newOrg()
      const keys = await adminKeys(org, 3)
      const answers = await Promise.all(
        keys.map((key, i) =>
          apiAs(tally.app, key).delete(`/v1/api-keys/${(keys[(i + 1) % keys.length] as Key).id}`),
        ),
      )
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 409])
      expect(await storedAdminKeys(org)).toHaveLength(1)
    }
  })

  it('still lets an admin key delete member keys and other admin keys', async () => {
    const org = await tally.newOrg()
    const api = apiAs(tally.app, org)
    const member = await api.post('/v1/api-keys', { name: 'member' })
    expect(await api.delete(`/v1/api-keys/${member.data.id}`)).toEqual({
      status: 200,
      data: null,
      error: null,
    })
    const [, other] = await adminKeys(org, 1)
    expect(await api.delete(`/v1/api-keys/${other?.id}`)).toEqual({ status: 200, data: null, error: null })
    expect(await storedAdminKeys(org)).toHaveLength(1)
  })
})
