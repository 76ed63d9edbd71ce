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
