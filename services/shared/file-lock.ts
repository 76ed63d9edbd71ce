/**
 * An exclusive flock(2) on a file: one holder at a time, across processes. The kernel drops it
 * when the holder closes it or ends, however it ends (SIGKILL included), so a lock is never stale;
 * and Node opens files close-on-exec, so a child the holder spawns (a server) does not inherit it.
 */
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs'
import koffi from 'koffi'

const LOCK_EX = 2
const LOCK_NB = 4
const EWOULDBLOCK = process.platform === 'darwin' ? 35 : 11

const libc = koffi.load(process.platform === 'darwin' ? 'libSystem.B.dylib' : 'libc.so.6')
const flock = libc.func('int flock(int fd, int operation)')

export interface FileLock {
  release(): void
}

/**
 * Takes the lock without waiting and writes this process's pid into the file (see lockHolder).
 * Undefined when another holder has it, another open of the file in this same process included.
 */
export function tryLockFile(path: string): FileLock | undefined {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600)
  if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    const errno = koffi.errno()
    closeSync(fd)
    if (errno === EWOULDBLOCK) return undefined
    throw new Error(`flock(${path}) failed with errno ${errno}`)
  }
  ftruncateSync(fd, 0)
  writeSync(fd, `${process.pid}\n`, 0)
  let held = true
  return {
    release() {
      if (!held) return
      held = false
      closeSync(fd) // drops the lock
    },
  }
}

/** Whether nobody holds the lock now: taken and at once released (a moment later it may be held again). */
export function lockIsFree(path: string): boolean {
  const lock = tryLockFile(path)
  lock?.release()
  return lock !== undefined
}

/** The pid the current (or last) holder wrote into the lock file. */
export function lockHolder(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}
