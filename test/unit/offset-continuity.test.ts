import { describe, expect, it } from 'vitest'
import { offsetContinuity } from '../../services/shared/events/offset-continuity.ts'

describe('offset continuity of one membership', () => {
  it('takes the first batch of a partition wherever it starts, then batches that go on from the last commit', () => {
    const c = offsetContinuity()
    expect(c.accepts(0, 100n)).toBe(true)
    c.committed(0, 109n)
    expect(c.accepts(0, 110n)).toBe(true)
    // Partitions are apart.
    expect(c.accepts(1, 7n)).toBe(true)
    expect(c.expected(0)).toBe(110n)
  })

  it('refuses a batch that starts past messages read and not committed (abandoned in a rebalance)', () => {
    const c = offsetContinuity()
    expect(c.accepts(3, 100n)).toBe(true)
    // 100–110 abandoned, uncommitted; the stream goes on at 111.
    expect(c.accepts(3, 111n)).toBe(false)
    expect(c.expected(3)).toBe(100n)
    // What was committed of it moves the mark; a gap after it is still refused.
    c.committed(3, 104n)
    expect(c.accepts(3, 111n)).toBe(false)
    expect(c.accepts(3, 105n)).toBe(true)
  })

  it('takes a redelivery (a batch from before the mark) and never moves the mark back', () => {
    const c = offsetContinuity()
    expect(c.accepts(0, 50n)).toBe(true)
    c.committed(0, 59n)
    expect(c.accepts(0, 50n)).toBe(true)
    c.committed(0, 55n)
    expect(c.expected(0)).toBe(60n)
  })
})
