import { getEventListeners } from 'node:events'
import { pino } from 'pino'
import { beforeAll, describe, expect, it } from 'vitest'
import { type Codec, loadEventCodec } from '../../services/shared/events/codec.ts'
import {
  type ConsumedMessage,
  createConsumerSteps,
  type PartitionBatch,
} from '../../services/shared/events/consumer-steps.ts'
import type { TallyEvent } from '../../services/shared/events/event.ts'
import type { BatchWriter } from '../../services/shared/events/handler.ts'
import { sampleEvent } from '../support/events.ts'

// The consumer's steps without a broker: what happens in which order, whatever client feeds them.
describe('consumer steps', () => {
  let codec: Codec<TallyEvent>
  beforeAll(async () => {
    codec = await loadEventCodec()
  })

  /** A partition batch that records what the steps did to it. */
  function partition(values: Buffer[], alive = () => true) {
    const did: string[] = []
    const messages: ConsumedMessage[] = values.map((value, i) => ({
      key: Buffer.from(`k${i}`),
      value,
      headers: { origin: 'test' },
      offset: String(100 + i),
    }))
    const batch: PartitionBatch = {
      topic: 'events',
      partition: 3,
      messages,
      alive,
      commit: async (offset) => void did.push(`commit ${offset}`),
    }
    return { batch, did }
  }

  function steps(
    writer: BatchWriter,
    did: string[],
    options: {
      chunkSize?: number
      chunkBytes?: number
      deadLetterUndecodable?: boolean
      maxBackoffMs?: number
    } = {},
  ) {
    const letters: { key: string; headers: Record<string, unknown> }[] = []
    const controller = new AbortController()
    const s = createConsumerSteps({
      groupId: 'steps-test',
      codec,
      writer,
      sendDeadLetters: async (messages) => {
        did.push(`dead-letter ${messages.length}`)
        letters.push(...messages.map((m) => ({ key: String(m.key), headers: m.headers })))
      },
      log: pino({ level: 'silent' }),
      chunkSize: options.chunkSize ?? 100,
      ...(options.chunkBytes === undefined ? {} : { chunkBytes: options.chunkBytes }),
      ...(options.deadLetterUndecodable === undefined
        ? {}
        : { deadLetterUndecodable: options.deadLetterUndecodable }),
      maxBackoffMs: options.maxBackoffMs ?? 10,
      signal: controller.signal,
    })
    return { ...s, letters, signal: controller.signal, stop: () => controller.abort() }
  }

  it('dead-letters what cannot be decoded, writes the rest, and commits only after both', async () => {
    const { batch, did } = partition([
      codec.encode(sampleEvent()),
      Buffer.from('not avro'),
      codec.encode(sampleEvent()),
    ])
    const writer: BatchWriter = {
      name: 'w',
      write: async (events) => {
        did.push(`write ${events.length}`)
        return []
      },
    }
    const s = steps(writer, did)
    await s.handleBatch(batch)
    expect(did).toEqual(['dead-letter 1', 'write 2', 'commit 102'])
    expect(s.letters).toEqual([
      {
        key: 'k1',
        headers: {
          origin: 'test',
          'tally-dlq-reason': 'not Avro single-object encoded (missing C3 01 marker)',
          'tally-dlq-topic': 'events',
          'tally-dlq-partition': '3',
          'tally-dlq-offset': '101',
          'tally-dlq-group': 'steps-test',
        },
      },
    ])
    expect(s.stats).toEqual({ consumed: 3, handled: 2, deadLettered: 1, failures: 0 })
  })

  it('dead-letters the events the writer can never record before committing past them', async () => {
    const { batch, did } = partition([codec.encode(sampleEvent()), codec.encode(sampleEvent())])
    const writer: BatchWriter = {
      name: 'w',
      write: async (events) => {
        did.push(`write ${events.length}`)
        return [{ index: 1, reason: 'refused' }]
      },
    }
    const s = steps(writer, did)
    await s.handleBatch(batch)
    expect(did).toEqual(['write 2', 'dead-letter 1', 'commit 101'])
    expect(s.letters[0]?.headers).toMatchObject({ 'tally-dlq-reason': 'refused', 'tally-dlq-offset': '101' })
    expect(s.stats.handled).toBe(1)
  })

  it('retries a failing write; a batch no longer alive leaves its remainder uncommitted', async () => {
    let running = true
    const { batch, did } = partition(
      Array.from({ length: 4 }, () => codec.encode(sampleEvent())),
      () => running,
    )
    let attempts = 0
    const writer: BatchWriter = {
      name: 'w',
      write: async (events) => {
        attempts++
        // The first chunk is written on its second attempt; the second chunk never is.
        if (attempts === 2) return []
        if (attempts >= 4) running = false
        throw new Error(`down (${events.length})`)
      },
    }
    const s = steps(writer, did, { chunkSize: 2 })
    await s.handleBatch(batch)
    expect(did).toEqual(['commit 101'])
    expect(s.stats).toMatchObject({ consumed: 4, handled: 2, failures: 3 })
  })

  it('a group that leaves undecodable messages to another group skips them: no letter, the rest written, committed past', async () => {
    const { batch, did } = partition([codec.encode(sampleEvent()), Buffer.from('not avro')])
    const writer: BatchWriter = {
      name: 'w',
      write: async (events) => {
        did.push(`write ${events.length}`)
        return []
      },
    }
    const s = steps(writer, did, { deadLetterUndecodable: false })
    await s.handleBatch(batch)
    expect(did).toEqual(['write 1', 'commit 101'])
    expect(s.stats).toMatchObject({ consumed: 2, handled: 1, deadLettered: 0 })
  })

  it('cuts chunks by bytes as well as count; a message larger than the byte bound goes alone', async () => {
    const big = (kb: number) => codec.encode(sampleEvent({ request_body: 'x'.repeat(kb * 1024) }))
    const { batch, did } = partition([big(10), big(10), big(10), big(40), big(1), big(1)])
    const writer: BatchWriter = {
      name: 'w',
      write: async (events) => {
        did.push(`write ${events.length}`)
        return []
      },
    }
    await steps(writer, did, { chunkBytes: 25 * 1024 }).handleBatch(batch)
    expect(did).toEqual([
      'write 2',
      'commit 101',
      'write 1',
      'commit 102',
      'write 1',
      'commit 103',
      'write 2',
      'commit 105',
    ])
  })

  it('an event that keeps failing alone while the rest of its chunk is written is dead-lettered after bounded tries', async () => {
    const { batch, did } = partition(Array.from({ length: 4 }, () => codec.encode(sampleEvent())))
    const writes: string[] = []
    const writer: BatchWriter = {
      name: 'w',
      write: async (_events, options) => {
        writes.push(options?.isolate ? 'isolating' : 'whole')
        // The third event can never be stored (say, a statement over a size limit).
        if (!options?.isolate) throw new Error('jsonb array size exceeds the maximum')
        return [{ index: 2, reason: 'jsonb array size exceeds the maximum', suspect: true }]
      },
    }
    const s = steps(writer, did)
    await s.handleBatch(batch)
    // Five whole writes, then three isolating ones: the third puts it over the bound.
    expect(writes).toEqual([...Array(5).fill('whole'), ...Array(3).fill('isolating')])
    expect(did).toEqual(['dead-letter 1', 'commit 103'])
    expect(s.letters[0]?.headers['tally-dlq-reason']).toBe(
      'failed 8 writes, 3 of them alone while the rest of its chunk was written: jsonb array size exceeds the maximum',
    )
    expect(s.letters[0]?.headers['tally-dlq-offset']).toBe('102')
    expect(s.stats).toMatchObject({ handled: 3, deadLettered: 1 })
  })

  it('a chunk that never gets written (the dependency down) is retried and never dead-lettered', async () => {
    let running = true
    const { batch, did } = partition([codec.encode(sampleEvent())], () => running)
    let attempts = 0
    const writer: BatchWriter = {
      name: 'w',
      write: async () => {
        if (++attempts >= 12) running = false
        throw new Error('connect ECONNREFUSED')
      },
    }
    const s = steps(writer, did)
    await s.handleBatch(batch)
    expect(attempts).toBe(12)
    expect(did).toEqual([])
    expect(s.stats).toMatchObject({ deadLettered: 0, failures: 12 })
  })

  it('leaves no abort listener behind from its backoffs, however many retries', async () => {
    let running = true
    const { batch, did } = partition([codec.encode(sampleEvent())], () => running)
    const listening: number[] = []
    let s: ReturnType<typeof steps> | undefined
    const writer: BatchWriter = {
      name: 'w',
      write: async () => {
        listening.push(getEventListeners(s?.signal as AbortSignal, 'abort').length)
        if (listening.length >= 200) running = false
        throw new Error('connect ECONNREFUSED')
      },
    }
    s = steps(writer, did, { maxBackoffMs: 1 })
    await s.handleBatch(batch)
    expect(listening).toHaveLength(200)
    expect(Math.max(...listening)).toBe(0)
    expect(getEventListeners(s.signal, 'abort')).toHaveLength(0)
  })
})
