import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { loadEventCodec } from '../../services/shared/events/codec.ts'
import { createPublishQueue, PublishQueueFullError } from '../../services/shared/events/publish-queue.ts'
import { createInProcessPublisher } from '../../services/shared/events/transport.ts'
import { sampleEvent } from '../support/events.ts'

// The producer's waiting room, without a broker: who goes next, what is refused, when a wait ends.
const queue = (o: Partial<{ maxBytes: number; maxBytesPerOrg: number; timeoutMs: number }> = {}) =>
  createPublishQueue<string>({ maxBytes: 100, maxBytesPerOrg: 40, timeoutMs: 10_000, ...o })
const part = (name: string, bytes: number) => ({ messages: [name], bytes })

describe('publish queue', () => {
  it('takes organizations in turn: a calm one is not queued behind a heavy one', async () => {
    const q = queue()
    for (let i = 1; i <= 3; i++) void q.add('heavy', [part(`heavy-${i}`, 10)])
    void q.add('calm', [part('calm-1', 1)])
    const first = q.take(15).flatMap((p) => p.messages)
    expect(first).toEqual(['heavy-1', 'calm-1'])
    // Who was served last waits behind the others next time.
    void q.add('calm', [part('calm-2', 1)])
    expect(q.take(15).flatMap((p) => p.messages)).toEqual(['heavy-2', 'calm-2'])
    expect(q.take(15).flatMap((p) => p.messages)).toEqual(['heavy-3'])
    expect(q.bytes).toBe(0)
  })

  it('always takes one part, even over the send size', () => {
    const q = queue({ maxBytesPerOrg: 100 })
    void q.add('a', [part('big', 60)])
    expect(q.take(10).flatMap((p) => p.messages)).toEqual(['big'])
  })

  it('refuses at once past the per-organization bound, unless that organization has nothing queued', () => {
    const q = queue()
    void q.add('a', [part('a-1', 30)])
    expect(() => q.add('a', [part('a-2', 11)])).toThrow(PublishQueueFullError)
    expect(() => q.add('a', [part('a-2', 11)])).toThrow(
      'this organization already has 30 bytes waiting for Kafka (at most 40)',
    )
    // Another organization still gets in; a lone publish larger than the bound too.
    void q.add('b', [part('b-1', 10)])
    void q.add('c', [part('c-1', 50)])
    expect(q.bytes).toBe(90)
  })

  it('refuses at once past the bound of all organizations, with when to retry', () => {
    const q = queue({ maxBytes: 50 })
    void q.add('a', [part('a', 30)])
    void q.add('b', [part('b', 20)])
    const err = (() => {
      try {
        void q.add('c', [part('c', 1)])
      } catch (e) {
        return e
      }
    })() as PublishQueueFullError
    expect(err).toBeInstanceOf(PublishQueueFullError)
    expect(err.message).toBe('50 bytes are waiting for Kafka (at most 50)')
    expect(err.retryAfterSeconds).toBeGreaterThan(0)
  })

  it('fails a publish still queued at its deadline and frees its bytes', async () => {
    const q = queue({ timeoutMs: 30 })
    const waiting = q.add('a', [part('a', 30)])
    await expect(waiting).rejects.toThrow('no acknowledgement from Kafka within 30 ms (queued and sending)')
    expect(q.bytes).toBe(0)
    expect(q.take(100)).toEqual([])
  })

  it('settles a publish of several parts once all were sent, and at its first failure', async () => {
    const q = queue({ maxBytesPerOrg: 100 })
    const sent = q.add('a', [part('a-1', 10), part('a-2', 10)])
    const [p1, p2] = q.take(10).concat(q.take(10))
    let settled = false
    void sent.then(() => {
      settled = true
    })
    p1?.sent()
    await Promise.resolve()
    expect(settled).toBe(false)
    p2?.sent()
    await sent

    const failing = q.add('a', [part('b-1', 10), part('b-2', 10)])
    const [f1] = q.take(10)
    f1?.failed(new Error('broker gone'))
    await expect(failing).rejects.toThrow('broker gone')
    // Its part still queued is taken off the queue with it.
    expect(q.bytes).toBe(0)
  })
})

describe('in-process transport bounds', () => {
  /** A publisher whose one handler stores nothing until `release` is called. */
  async function stalled(bounds: { maxBytes: number; maxBytesPerOrg: number }) {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const stored: string[] = []
    const publisher = createInProcessPublisher(
      await loadEventCodec(),
      [
        {
          name: 'stalled',
          async handle(events) {
            await held
            stored.push(...events.map((e) => e.request_id))
          },
        },
      ],
      bounds,
    )
    return { publisher, stored, release }
  }
  const orgs = { a: randomUUID(), b: randomUUID(), c: randomUUID() }
  const eventOf = (org: keyof typeof orgs) => sampleEvent({ organization_id: orgs[org] })
  const size = async () => (await loadEventCodec()).encode(eventOf('a')).length

  it('refuses past the per-organization bound while storing is slow, another organization still gets in', async () => {
    const one = await size()
    const { publisher, stored, release } = await stalled({ maxBytes: 100 * one, maxBytesPerOrg: 2 * one })
    const first = publisher.publish([eventOf('a'), eventOf('a')])
    await expect(publisher.publish([eventOf('a')])).rejects.toThrow(
      /this organization already has \d+ bytes waiting to be stored/,
    )
    await expect(publisher.publish([eventOf('a')])).rejects.toBeInstanceOf(PublishQueueFullError)
    const other = publisher.publish([eventOf('b')])
    release()
    await Promise.all([first, other])
    expect(stored).toHaveLength(3)
    // Once stored, the organization's bytes are free again.
    await publisher.publish([eventOf('a')])
    expect(stored).toHaveLength(4)
  })

  it('refuses past the bound in all, a lone publish of an organization included', async () => {
    const one = await size()
    const { publisher, release } = await stalled({ maxBytes: 2 * one, maxBytesPerOrg: 2 * one })
    const first = publisher.publish([eventOf('a'), eventOf('b')])
    const refused = await publisher.publish([eventOf('c')]).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(PublishQueueFullError)
    expect((refused as PublishQueueFullError).retryAfterSeconds).toBeGreaterThan(0)
    release()
    await first
  })
})
