import { describe, expect, it } from 'vitest'
import { coalesce } from '../../services/shared/events/coalesced-writer.ts'
import type { TallyEvent } from '../../services/shared/events/event.ts'
import { sampleEvent } from '../support/events.ts'

const events = (n: number, body = '') =>
  Array.from({ length: n }, () => sampleEvent(body ? { request_body: body } : {}))
const upTo = (maxEvents: number, maxBytes = 1 << 30) => ({ maxEvents, maxBytes })

describe('coalesced handler writes', () => {
  it('calls arriving together share one write, and each caller resolves after it', async () => {
    const writes: TallyEvent[][] = []
    const handler = coalesce({ name: 'w', handle: async (batch) => void writes.push(batch) }, upTo(100))
    await Promise.all([handler.write(events(3)), handler.write(events(4)), handler.write(events(5))])
    expect(writes.map((w) => w.length)).toEqual([12])
  })

  it('never puts more than maxEvents in one write, nor splits a call', async () => {
    const writes: number[] = []
    const handler = coalesce({ name: 'w', handle: async (batch) => void writes.push(batch.length) }, upTo(10))
    await Promise.all([handler.write(events(6)), handler.write(events(6)), handler.write(events(15))])
    expect(writes).toEqual([6, 6, 15])
  })

  it('never puts more than maxBytes of events in one write: one-megabyte events go a few at a time', async () => {
    const writes: number[] = []
    const handler = coalesce(
      { name: 'w', handle: async (batch) => void writes.push(batch.length) },
      upTo(1000, 3.5 * 1024 * 1024),
    )
    const big = 'x'.repeat(1024 * 1024)
    await Promise.all(Array.from({ length: 10 }, () => handler.write(events(1, big))))
    // Three fit in 3.5 MiB; the calls queued together are written three by three.
    expect(writes).toEqual([3, 3, 3, 1])
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
      upTo(100),
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
      upTo(100),
    )
    await expect(handler.write(events(2))).rejects.toThrow('sync')
  })

  describe('an isolating write (after repeated failures)', () => {
    it('finds the events that fail while the rest are written, and returns them as suspects', async () => {
      const batch = events(8)
      const poison = new Set([batch[2]?.request_id, batch[5]?.request_id])
      const written: string[] = []
      const handler = coalesce(
        {
          name: 'w',
          handle: async (part) => {
            if (part.some((e) => poison.has(e.request_id))) throw new Error('Invalid string length')
            written.push(...part.map((e) => e.request_id))
          },
        },
        upTo(100),
      )
      const failed = await handler.write(batch, { isolate: true })
      expect(failed).toEqual([
        { index: 2, reason: 'Invalid string length', suspect: true },
        { index: 5, reason: 'Invalid string length', suspect: true },
      ])
      expect(new Set(written)).toEqual(
        new Set(batch.filter((e) => !poison.has(e.request_id)).map((e) => e.request_id)),
      )
    })

    it('rejects, isolating nothing, when nothing is written (the dependency is down), after 2·log2(n)+2 calls', async () => {
      let calls = 0
      const handler = coalesce(
        {
          name: 'w',
          handle: async () => {
            calls++
            throw new Error('connect ECONNREFUSED')
          },
        },
        upTo(100),
      )
      await expect(handler.write(events(64), { isolate: true })).rejects.toThrow('ECONNREFUSED')
      expect(calls).toBe(2 * 6 + 2)
      await expect(handler.write(events(1), { isolate: true })).rejects.toThrow('ECONNREFUSED')
    })

    it('rejects, suspecting no event, when the events that fail do so because their shard is down', async () => {
      // Half the events are bound for a shard that is down: their parts fail while the others
      // are written, the pattern of a bad row, but the handler knows the error for an outage.
      const batch = events(8)
      const onDownShard = new Set(batch.filter((_, i) => i % 2 === 1).map((e) => e.request_id))
      const outage = Object.assign(new Error('Connection refused (127.0.0.1:9001): Insertion status:'), {
        type: 'NETWORK_ERROR',
      })
      const written: string[] = []
      const handler = coalesce(
        {
          name: 'w',
          transient: (err) => (err as { type?: string }).type === 'NETWORK_ERROR',
          handle: async (part) => {
            const mine = part.filter((e) => !onDownShard.has(e.request_id))
            written.push(...mine.map((e) => e.request_id))
            if (mine.length < part.length) throw outage
          },
        },
        upTo(100),
      )
      await expect(handler.write(batch, { isolate: true })).rejects.toBe(outage)
      // Written once, as one write: no part of it was tried alone.
      expect(written).toEqual(batch.filter((e) => !onDownShard.has(e.request_id)).map((e) => e.request_id))
    })
  })
})
