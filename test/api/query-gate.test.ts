import { describe, expect, it } from 'vitest'
import { createQueryGate } from '../../services/api/http/query-gate.ts'
import { AppError } from '../../services/shared/errors.ts'
import { waitFor } from '../support/wait.ts'

/** A piece of work that runs until the test ends it. */
function held() {
  let finish = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  return { work: () => done, finish }
}

describe('query gate: each organization runs its share of queries at once, the rest wait their turn', () => {
  it('admits two per organization, the third when one ends, in order; another organization is never held', async () => {
    const gate = createQueryGate(2, 10_000)
    const started: string[] = []
    const run = (org: string, name: string, work: () => Promise<void>) =>
      gate.run(org, async () => {
        started.push(name)
        await work()
        return name
      })
    const [a1, a2, a3, a4] = [held(), held(), held(), held()]
    const first = run('a', 'a1', a1.work)
    const second = run('a', 'a2', a2.work)
    const third = run('a', 'a3', a3.work)
    const fourth = run('a', 'a4', a4.work)
    await expect(run('b', 'b1', async () => {})).resolves.toBe('b1')
    expect(started).toEqual(['a1', 'a2', 'b1'])

    a2.finish()
    await expect(second).resolves.toBe('a2')
    await waitFor(() => started.includes('a3'), { what: 'a3 to start' })
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3'])
    a1.finish()
    a3.finish()
    await expect(Promise.all([first, third])).resolves.toEqual(['a1', 'a3'])
    await waitFor(() => started.includes('a4'), { what: 'a4 to start' })
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4'])
    a4.finish()
    await expect(fourth).resolves.toBe('a4')
  })

  it('a query that waits longer than allowed is a 429, and its place is given up', async () => {
    const gate = createQueryGate(1, 50)
    const holder = held()
    const running = gate.run('a', holder.work)
    const refused = await gate.run('a', async () => 'never').catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(AppError)
    expect(refused).toMatchObject({
      status: 429,
      message: 'This organization already runs 1 queries at once; retry when one has finished',
    })
    holder.finish()
    await running
    await expect(gate.run('a', async () => 'next')).resolves.toBe('next')
  })

  it('a failing query frees its place', async () => {
    const gate = createQueryGate(1, 50)
    await expect(gate.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    await expect(gate.run('a', async () => 'free')).resolves.toBe('free')
  })
})

describe('query gate: a query that outlives its answer keeps its slot', () => {
  it('holds the slot after the work returns, until what it holds settles', async () => {
    const gate = createQueryGate(1, 50)
    const server = held()
    // The caller has its answer…
    await expect(
      gate.run('a', async (hold) => {
        hold(server.work())
        return 'answered'
      }),
    ).resolves.toBe('answered')
    // …while the server still runs the query: the organization's one slot is taken.
    await expect(gate.run('a', async () => 'never')).rejects.toMatchObject({ status: 429 })
    await expect(gate.run('b', async () => 'other organization')).resolves.toBe('other organization')
    server.finish()
    await waitFor(async () => (await gate.run('a', async () => 'free').catch(() => undefined)) === 'free', {
      what: 'the slot to be free once the server query ended',
    })
  })
})
