import { describe, expect, it } from 'vitest'
import { createQueryGate } from '../../services/api/http/query-gate.ts'
import {
  createFairShare,
  enginePriority,
  LOWEST_PRIORITY,
  niceFor,
  withEnginePriority,
} from '../../services/shared/clickhouse/priority.ts'

function clock() {
  let t = 1_000_000
  return {
    now: () => t,
    advance(ms: number) {
      t += ms
    },
  }
}

describe('engine priority: an organization keeping ClickHouse busy gets less of a busy CPU', () => {
  it('is 0 for light use, rises with cores kept busy and queries running, and stops at 19', () => {
    expect(niceFor(0, 0)).toBe(0)
    expect(niceFor(0.25, 0)).toBe(0)
    expect(niceFor(0.625, 0)).toBe(10)
    expect(niceFor(1, 0)).toBe(LOWEST_PRIORITY)
    expect(niceFor(8, 0)).toBe(LOWEST_PRIORITY)
    expect(niceFor(0, 1)).toBe(6)
    expect(niceFor(0, 2)).toBe(12)
    expect(niceFor(0, 5)).toBe(LOWEST_PRIORITY)
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY])
      expect(niceFor(bad, 0)).toBeGreaterThanOrEqual(0)
  })

  it('a calm organization stays at 0 beside one that keeps two queries running', () => {
    const c = clock()
    const share = createFairShare(c.now)
    // The heavy organization: two queries of 2 s each, back to back, for 20 s.
    const heavy: number[] = []
    for (let i = 0; i < 10; i++) {
      const a = share.start('heavy')
      const b = share.start('heavy')
      heavy.push(a.priority, b.priority)
      // The calm organization: a 20 ms query every 200 ms meanwhile.
      for (let j = 0; j < 10; j++) {
        const q = share.start('calm')
        expect(q.priority).toBe(0)
        c.advance(20)
        q.end()
        c.advance(180)
      }
      a.end()
      b.end()
    }
    expect(heavy.slice(0, 2)).toEqual([0, 6])
    expect(heavy.slice(-2)).toEqual([LOWEST_PRIORITY, LOWEST_PRIORITY])
  })

  it('forgets: after a quiet half minute the heavy organization is back at 0, and no longer tracked', () => {
    const c = clock()
    const share = createFairShare(c.now)
    const q = share.start('heavy')
    c.advance(30_000)
    const second = share.start('heavy')
    expect(second.priority).toBeGreaterThan(10) // the running 30 s query counts
    second.end()
    q.end()
    c.advance(120_000)
    const next = share.start('heavy')
    expect(next.priority).toBe(0)
    next.end()
    next.end() // a second end changes nothing
    // Still running nothing, its use decayed below a millisecond after long enough.
    expect(share.size()).toBe(1)
    c.advance(600_000)
    share.start('other').end()
    expect(share.size()).toBe(1)
  })

  it('the query gate hands each query its priority, and a held slot keeps counting until released', async () => {
    const c = clock()
    const gate = createQueryGate(4, 10_000, createFairShare(c.now))
    let release = () => {}
    const outlives = new Promise<void>((resolve) => {
      release = resolve
    })
    const seen: (string | undefined)[] = []
    await gate.run('org', async (hold) => {
      seen.push(enginePriority().os_thread_priority)
      hold(outlives)
    })
    // The first query's server work still runs (held): the next starts one step lower.
    await gate.run('org', async () => {
      seen.push(enginePriority().os_thread_priority)
    })
    release()
    await outlives
    await new Promise((resolve) => setImmediate(resolve))
    await gate.run('org', async () => {
      seen.push(enginePriority().os_thread_priority)
    })
    expect(seen).toEqual([undefined, '6', undefined])
    // Outside a gate, and at priority 0, no setting is sent.
    expect(enginePriority()).toEqual({})
    expect(await withEnginePriority(0, async () => enginePriority())).toEqual({})
    expect(await withEnginePriority(7, async () => enginePriority())).toEqual({ os_thread_priority: '7' })
  })

  it('without a fair share the gate sends no priority', async () => {
    const gate = createQueryGate(2, 10_000)
    expect(await gate.run('org', async () => enginePriority())).toEqual({})
  })
})
