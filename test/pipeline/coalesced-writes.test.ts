import { describe, expect, it } from 'vitest'
import { coalesce } from '../../services/shared/events/coalesced-writer.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { sampleEvent } from '../support/events.ts'

const events = (n: number) => Array.from({ length: n }, () => sampleEvent())

describe('coalesced handler writes', () => {
  it('calls arriving together share one write, and each caller resolves after it', async () => {
    const writes: RequestEvent[][] = []
    const handler = coalesce({ name: 'w', handle: async (batch) => void writes.push(batch) }, 100)
    await Promise.all([handler.write(events(3)), handler.write(events(4)), handler.write(events(5))])
    expect(writes.map((w) => w.length)).toEqual([12])
  })

  it('never puts more than maxEvents in one write, nor splits a call', async () => {
    const writes: number[] = []
    const handler = coalesce({ name: 'w', handle: async (batch) => void writes.push(batch.length) }, 10)
    await Promise.all([handler.write(events(6)), handler.write(events(6)), handler.write(events(15))])
    expect(writes).toEqual([6, 6, 15])
  })

  it('a failed write rejects every caller whose events it held, and the next write still happens', async () => {
    let fail = true
    const handler = coalesce(
      {
        name: 'w',
        handle: async () => {
          if (fail) throw new Error('clickhouse down')
        },
      },
      100,
    )
    const results = await Promise.allSettled([handler.write(events(1)), handler.write(events(1))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    fail = false
    await expect(handler.write(events(1))).resolves.toEqual([])
  })

  it('a handler that throws synchronously rejects its callers instead of crashing the process', async () => {
    const handler = coalesce(
      {
        name: 'w',
        handle: () => {
          throw new Error('sync')
        },
      },
      100,
    )
    await expect(handler.write(events(2))).rejects.toThrow('sync')
  })
})
