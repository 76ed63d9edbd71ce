/** Small facts about processes, shared by the embedded servers' launchers. */
import { readFileSync } from 'node:fs'

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The process exists and has not ended. A zombie (ended, not yet reaped by the parent it was
 * handed to when its own parent died) still answers kill(0), so /proc decides on Linux.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false // EPERM: alive, another user's
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat[stat.lastIndexOf(')') + 2] !== 'Z'
  } catch {
    return process.platform !== 'linux' // gone in between, or no /proc to ask
  }
}

/**
 * Listeners of something that ends once (a server process): each is told exactly once, also when it
 * is added after the end, as start-up code that registers late would otherwise never hear of it.
 */
export function endListeners<T>() {
  let end: { value: T } | undefined
  const listeners: ((value: T) => void)[] = []
  return {
    add(listener: (value: T) => void): void {
      if (end) {
        const { value } = end
        queueMicrotask(() => listener(value))
      } else listeners.push(listener)
    },
    /** Tells every listener, each in turn even when one throws; the first error is thrown after. */
    end(value: T): void {
      if (end) return
      end = { value }
      const failures: unknown[] = []
      for (const listener of listeners.splice(0)) {
        try {
          listener(value)
        } catch (err) {
          failures.push(err)
        }
      }
      if (failures.length > 0) throw failures[0]
    },
  }
}

/** Calls `onGone` once process `pid` ends: checked every second, never keeping this process alive. */
export function watchProcess(pid: number, onGone: () => void): () => void {
  const timer = setInterval(() => {
    if (isAlive(pid)) return
    clearInterval(timer)
    onGone()
  }, 1_000)
  timer.unref()
  return () => clearInterval(timer)
}
