import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import postgres from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { createNotifiedCache, type NotifiedCacheOptions } from '../../services/shared/notified-cache.ts'
import { engines } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'

const log = pino({ level: 'silent' })

interface Value {
  group: string
  n: number
}

describe('a cache kept true by LISTEN/NOTIFY', () => {
  const sql = postgres(engines().postgresUrl, { onnotice: () => {}, max: 2 })
  const caches: { close(): Promise<void> }[] = []
  afterAll(async () => {
    await Promise.all(caches.map((c) => c.close()))
    await sql.end()
  })

  /** A cache on a channel of its own, and a load that counts its calls. */
  async function cache(options: Partial<NotifiedCacheOptions<Value>> = {}) {
    const channel = `test_${randomUUID().replaceAll('-', '')}`
    const made = await createNotifiedCache<Value>(sql, log, {
      channel,
      name: 'test_cache',
      ttlMs: 60_000,
      maxEntries: 100,
      groupOf: (value) => value.group,
      ...options,
    })
    caches.push(made)
    let loads = 0
    const load = (group: string | null) => async () => (group === null ? null : { group, n: ++loads })
    return { cache: made, channel, load, loads: () => loads }
  }

  it('forget the group a notification names, and only that group', async () => {
    const { cache: c, channel, load, loads } = await cache()
    await c.get('a1', load('a'))
    await c.get('a2', load('a'))
    await c.get('b1', load('b'))
    expect(loads()).toBe(3)
    await c.get('a1', load('a'))
    expect(loads()).toBe(3)
    await sql`select pg_notify(${channel}, 'a')`
    await waitFor(async () => (await c.get('a1', load('a')))?.n !== 1, { what: 'group a forgotten' })
    await c.get('b1', load('b'))
    expect(loads()).toBe(4)
  })

  it('answer a load that was in flight while its group was forgotten, but not keep it', async () => {
    const { cache: c, load, loads } = await cache()
    let finish: () => void = () => {}
    const slow = c.get('a1', async () => {
      await new Promise<void>((resolve) => {
        finish = resolve
      })
      return load('a')()
    })
    c.forget('a')
    finish()
    expect(await slow).toEqual({ group: 'a', n: 1 })
    expect(await c.get('a1', load('a'))).toEqual({ group: 'a', n: 2 })
    expect(loads()).toBe(2)
  })

  it('remember misses apart from values, so that a flood of misses evicts only misses', async () => {
    const { cache: c, load, loads } = await cache({ maxEntries: 2, misses: { ttlMs: 60_000, maxEntries: 2 } })
    await c.get('known', load('a'))
    for (let i = 0; i < 10; i++) expect(await c.get(`unknown-${i}`, load(null))).toBeNull()
    expect(await c.get('known', load('a'))).toEqual({ group: 'a', n: 1 })
    let missLoads = 0
    await c.get('unknown-9', async () => {
      missLoads++
      return null
    })
    expect(missLoads).toBe(0) // a miss is remembered too
    expect(loads()).toBe(1)
  })

  it('share one load between callers missing the same keys at once', async () => {
    const { cache: c, load, loads } = await cache()
    const [x, y] = await Promise.all([c.get('a1', load('a')), c.get('a1', load('a'))])
    expect(x).toEqual({ group: 'a', n: 1 })
    expect(y).toBe(x)
    expect(loads()).toBe(1)
  })
})
