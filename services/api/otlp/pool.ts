import { type Transferable, Worker } from 'node:worker_threads'

/**
 * A few worker threads for CPU work that would otherwise hold the event loop (decoding an OTLP
 * body and mapping its spans takes ~1 s for 10 MB). Tasks wait in one queue per key (an
 * organization), taken round robin, so a key that floods the pool waits behind itself while
 * another key's task runs next. Queues are bounded per key and in all; each task has a deadline,
 * past which its worker is ended and replaced.
 */
export interface WorkerPool<In, Out> {
  /** `bytes`: what the input holds, counted against maxQueuedBytes while it waits; `transfer`: moved, not copied. */
  run(key: string, input: In, options?: { bytes?: number; transfer?: Transferable[] }): Promise<Out>
  /** Workers, tasks in a worker now, and tasks waiting for one. */
  stats(): { size: number; running: number; waiting: number }
  close(): Promise<void>
}

export interface WorkerPoolOptions {
  /**
   * The worker's module: it posts `{ ready: true }` once loaded, then answers each input it is
   * posted with `{ output }` or `{ error }`, one at a time.
   */
  file: URL
  size: number
  /** Tasks waiting (not running) at most, in all and per key, and the bytes their inputs hold in all. */
  maxQueued: number
  maxQueuedPerKey: number
  maxQueuedBytes: number
  /** How long a task may run in its worker. */
  deadlineMs: number
}

/** The queue of the task's key, or all queues, are full: the caller should come back later. */
export class PoolFullError extends Error {
  readonly scope: 'key' | 'all'
  constructor(scope: 'key' | 'all') {
    super(scope === 'key' ? 'too many tasks of this key are waiting' : 'too many tasks are waiting')
    this.scope = scope
  }
}

/** A task ran past its deadline; its worker was ended. */
export class TaskDeadlineError extends Error {
  readonly deadlineMs: number
  constructor(deadlineMs: number) {
    super(`the task ran longer than ${deadlineMs} ms`)
    this.deadlineMs = deadlineMs
  }
}

/** What a worker's task threw, carried across the thread: its message and, if any, a status and code. */
export class TaskError extends Error {
  readonly status: number | undefined
  readonly code: string | undefined
  constructor(message: string, status?: number, code?: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

interface Task<In, Out> {
  key: string
  input: In
  bytes: number
  transfer: Transferable[]
  resolve(value: Out): void
  reject(err: Error): void
}

interface Slot<In, Out> {
  worker: Worker
  task?: Task<In, Out>
  timer?: NodeJS.Timeout
  /** Its module has loaded: it takes tasks from then on, so a deadline counts the task alone. */
  ready?: boolean
  /** Ended or failed: it takes no task and is replaced once it has exited. */
  retired?: boolean
}

type Reply<Out> =
  | { ready: true }
  | { output: Out }
  | { error: { message: string; status?: number; code?: string } }

export function createWorkerPool<In, Out>(options: WorkerPoolOptions): WorkerPool<In, Out> {
  const queues = new Map<string, Task<In, Out>[]>()
  /** For each key with tasks running or waiting: when it was last given a worker (a sequence number). */
  const lastServed = new Map<string, number>()
  const running = new Map<string, number>()
  let served = 0
  let queued = 0
  let queuedBytes = 0
  let closed = false
  /** Why workers cannot start (their module fails to load): every task is refused with it. */
  let broken: Error | undefined
  const slots: Slot<In, Out>[] = []

  function forgetIfIdle(key: string) {
    if (!queues.has(key) && !running.get(key)) {
      running.delete(key)
      lastServed.delete(key)
    }
  }

  function settle(slot: Slot<In, Out>, outcome: { output: Out } | { error: Error }) {
    const task = slot.task
    clearTimeout(slot.timer)
    slot.task = undefined
    slot.timer = undefined
    if (!task) return
    slot.worker.unref()
    running.set(task.key, (running.get(task.key) ?? 1) - 1)
    forgetIfIdle(task.key)
    if ('error' in outcome) task.reject(outcome.error)
    else task.resolve(outcome.output)
  }

  function retire(slot: Slot<In, Out>, error: Error) {
    slot.retired = true
    settle(slot, { error })
    // The exit handler starts its replacement.
    void slot.worker.terminate()
  }

  function spawn(): Slot<In, Out> {
    const slot: Slot<In, Out> = { worker: new Worker(options.file) }
    // An idle worker does not keep the process alive; a busy one does, until its answer.
    slot.worker.unref()
    slot.worker.on('message', (reply: Reply<Out>) => {
      if ('ready' in reply) {
        slot.ready = true
        return next()
      }
      if (slot.retired) return
      if ('error' in reply)
        settle(slot, { error: new TaskError(reply.error.message, reply.error.status, reply.error.code) })
      else settle(slot, { output: reply.output })
      next()
    })
    slot.worker.on('error', (err) => {
      // A worker that fails before its module has loaded would fail again: no replacement loop.
      if (!slot.ready) broken ??= err
      retire(slot, err)
    })
    slot.worker.on('exit', () => {
      retire(slot, new Error('the worker exited'))
      const index = slots.indexOf(slot)
      if (index < 0 || closed) return
      if (broken) return refuseAll(broken)
      slots[index] = spawn()
      next()
    })
    return slot
  }

  function refuseAll(err: Error) {
    const waiting = [...queues.entries()]
    queues.clear()
    queued = 0
    queuedBytes = 0
    for (const [key, tasks] of waiting) {
      forgetIfIdle(key)
      for (const task of tasks) task.reject(err)
    }
  }

  /**
   * The oldest task of the key served least recently (a key not served yet first): a key that
   * floods the pool takes a worker only after every other waiting key has had one.
   */
  function take(): Task<In, Out> | undefined {
    let chosen: string | undefined
    for (const key of queues.keys()) {
      if (chosen === undefined || (lastServed.get(key) ?? -1) < (lastServed.get(chosen) ?? -1)) chosen = key
    }
    if (chosen === undefined) return undefined
    const tasks = queues.get(chosen) as Task<In, Out>[]
    const task = tasks.shift() as Task<In, Out>
    if (tasks.length === 0) queues.delete(chosen)
    queued--
    queuedBytes -= task.bytes
    lastServed.set(chosen, ++served)
    running.set(chosen, (running.get(chosen) ?? 0) + 1)
    return task
  }

  function next() {
    for (const slot of slots) {
      if (slot.task || slot.retired || !slot.ready) continue
      const task = take()
      if (!task) return
      slot.task = task
      slot.timer = setTimeout(
        () => retire(slot, new TaskDeadlineError(options.deadlineMs)),
        options.deadlineMs,
      )
      slot.worker.ref()
      slot.worker.postMessage(task.input, task.transfer)
    }
  }

  for (let i = 0; i < options.size; i++) slots.push(spawn())

  return {
    run(key, input, { bytes = 0, transfer = [] } = {}) {
      if (closed) return Promise.reject(new Error('the worker pool is closed'))
      if (broken) return Promise.reject(broken)
      const tasks = queues.get(key) ?? []
      if (tasks.length >= options.maxQueuedPerKey) return Promise.reject(new PoolFullError('key'))
      // One task may wait whatever it holds: the bytes bound the others behind it.
      if (queued >= options.maxQueued || (queued > 0 && queuedBytes + bytes > options.maxQueuedBytes))
        return Promise.reject(new PoolFullError('all'))
      return new Promise<Out>((resolve, reject) => {
        tasks.push({ key, input, bytes, transfer, resolve, reject })
        queues.set(key, tasks)
        queued++
        queuedBytes += bytes
        next()
      })
    },
    stats: () => ({
      size: slots.length,
      running: slots.filter((slot) => slot.task).length,
      waiting: queued,
    }),
    async close() {
      closed = true
      refuseAll(new Error('the worker pool is closed'))
      await Promise.all(slots.map((slot) => slot.worker.terminate()))
    },
  }
}
