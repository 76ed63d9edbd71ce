import { describe, expect, it } from 'vitest'
import {
  createWorkerPool,
  PoolFullError,
  TaskDeadlineError,
  TaskError,
  type WorkerPoolOptions,
} from '../../services/api/otlp/pool.ts'

interface Job {
  name: string
  /** Blocks the worker until the test opens the gate (Atomics on shared memory): no timing involved. */
  gate?: SharedArrayBuffer
  spin?: boolean
  fail?: { message: string; status?: number; code?: string }
  crash?: boolean
}

// The worker a test pool runs, as a data: URL: the module the pool is given is any worker module.
const WORKER = new URL(
  `data:text/javascript,${encodeURIComponent(`
    import { parentPort } from 'node:worker_threads'
    parentPort.on('message', (job) => {
      if (job.gate) Atomics.wait(new Int32Array(job.gate), 0, 0)
      if (job.spin) for (;;) {}
      if (job.crash) throw new Error('crashed')
      parentPort.postMessage(job.fail ? { error: job.fail } : { output: job.name })
    })
    parentPort.postMessage({ ready: true })
  `)}`,
)

const unstarted = (options: Partial<WorkerPoolOptions> = {}) =>
  createWorkerPool<Job, string>({
    file: WORKER,
    size: 1,
    maxQueued: 100,
    maxQueuedBytes: 1000,
    maxQueuedPerKey: 100,
    deadlineMs: 60_000,
    ...options,
  })

/** A pool whose worker has started and answered once: what a test submits next runs at once. */
async function pool(options: Partial<WorkerPoolOptions> = {}) {
  const started = unstarted(options)
  await started.run('warm-up', { name: 'warm-up' })
  return started
}

function gate() {
  const memory = new SharedArrayBuffer(4)
  return {
    memory,
    open() {
      Atomics.store(new Int32Array(memory), 0, 1)
      Atomics.notify(new Int32Array(memory), 0)
    },
  }
}

describe('worker pool', () => {
  it('serves the key served least recently first: a flooding key does not keep another waiting', async () => {
    const p = await pool()
    const g = gate()
    const done: string[] = []
    const run = (key: string, job: Job) => p.run(key, job).then((name) => void done.push(name))
    const all = [
      run('a', { name: 'a1', gate: g.memory }),
      run('a', { name: 'a2' }),
      run('a', { name: 'a3' }),
      run('a', { name: 'a4' }),
      run('b', { name: 'b1' }),
      run('b', { name: 'b2' }),
    ]
    expect(p.stats()).toEqual({ size: 1, running: 1, waiting: 5 })
    g.open()
    await Promise.all(all)
    expect(done).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4'])
    await p.close()
  })

  it('bounds what waits, per key and in all, and says which bound refused', async () => {
    const p = await pool({ maxQueuedPerKey: 2, maxQueued: 3 })
    const g = gate()
    const running = p.run('a', { name: 'a1', gate: g.memory })
    const waiting = [p.run('a', { name: 'a2' }), p.run('a', { name: 'a3' })]
    await expect(p.run('a', { name: 'a4' })).rejects.toMatchObject(new PoolFullError('key'))
    waiting.push(p.run('b', { name: 'b1' }))
    await expect(p.run('c', { name: 'c1' })).rejects.toMatchObject(new PoolFullError('all'))
    g.open()
    expect(await Promise.all([running, ...waiting])).toEqual(['a1', 'a2', 'a3', 'b1'])
    await p.close()
  })

  it('bounds the bytes waiting inputs hold, letting one task wait whatever it holds', async () => {
    const p = await pool({ maxQueuedBytes: 100 })
    const g = gate()
    const running = p.run('a', { name: 'a1', gate: g.memory }, { bytes: 1000 })
    const big = p.run('b', { name: 'b1' }, { bytes: 150 })
    await expect(p.run('c', { name: 'c1' }, { bytes: 1 })).rejects.toMatchObject(new PoolFullError('all'))
    g.open()
    expect(await Promise.all([running, big])).toEqual(['a1', 'b1'])
    expect(await p.run('c', { name: 'c2' }, { bytes: 100 })).toBe('c2')
    await p.close()
  })

  it('ends a task past its deadline, replaces its worker, and runs the next task', async () => {
    const p = await pool({ deadlineMs: 200 })
    const spinning = p.run('a', { name: 'forever', spin: true })
    const after = p.run('b', { name: 'next' })
    await expect(spinning).rejects.toBeInstanceOf(TaskDeadlineError)
    expect(await after).toBe('next')
    await p.close()
  })

  it("carries a task's error with its status and code; a crashed worker is replaced", async () => {
    const p = await pool()
    await expect(
      p.run('a', {
        name: 'x',
        fail: { message: 'body: too many spans', status: 413, code: 'payload_too_large' },
      }),
    ).rejects.toMatchObject(new TaskError('body: too many spans', 413, 'payload_too_large'))
    await expect(p.run('a', { name: 'y', crash: true })).rejects.toThrow('crashed')
    expect(await p.run('a', { name: 'z' })).toBe('z')
    await p.close()
  })

  it('refuses every task when its workers cannot start, rather than starting them again and again', async () => {
    const p = unstarted({
      file: new URL(`data:text/javascript,${encodeURIComponent('throw new Error("no module")')}`),
    })
    const first = await p.run('a', { name: 'x' }).catch((err: Error) => err)
    expect(first).toMatchObject({ message: 'no module' })
    // The very error of the first start: no worker was started again to fail anew.
    expect(await p.run('a', { name: 'y' }).catch((err: Error) => err)).toBe(first)
    await p.close()
  })
})
