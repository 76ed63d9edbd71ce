import { randomUUID } from 'node:crypto'
import { mkdir, readdir, rm, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { type FileLock, tryLockFile } from './file-lock.ts'
import type { Logger } from './logger.ts'

/**
 * A folder of this process's own under `$TALLY_DATA_DIR/tmp` for files on their way elsewhere
 * (export parts), never the system's /tmp: a process killed mid-write leaves them where the next
 * sweep finds them. Each folder `<id>/` is claimed by a lock on `<id>.lock`, taken before the
 * folder exists and held for the process's life (the kernel drops it however the process ends),
 * so processes sharing a data directory tell a live folder from a dead one's leftovers.
 */
export interface Scratch {
  /** This process's folder. */
  readonly dir: string
  /** Removes the folders of processes that ended; how many. */
  sweep(): Promise<number>
  /** Removes this process's folder and gives up its claim. */
  close(): Promise<void>
}

export async function openScratch(dataDir: string, log: Logger): Promise<Scratch> {
  const root = resolve(dataDir, 'tmp')
  await mkdir(root, { recursive: true, mode: 0o700 })
  const id = randomUUID()
  const lock = tryLockFile(join(root, `${id}.lock`)) as FileLock
  const dir = join(root, id)
  await mkdir(dir, { mode: 0o700 })

  const sweep = async () => {
    let removed = 0
    for (const entry of await readdir(root, { withFileTypes: true })) {
      // A lock file without its folder is left alone: its process may be about to create it.
      if (!entry.isDirectory() || entry.name === id) continue
      const path = join(root, entry.name)
      const claim = tryLockFile(`${path}.lock`)
      if (!claim) continue
      try {
        await rm(path, { recursive: true, force: true })
        await unlink(`${path}.lock`).catch(() => {})
        removed++
      } finally {
        claim.release()
      }
    }
    if (removed > 0) log.info({ folders: removed, root }, 'scratch_leftovers_removed')
    return removed
  }
  await sweep()

  return {
    dir,
    sweep,
    async close() {
      await rm(dir, { recursive: true, force: true })
      await unlink(`${dir}.lock`).catch(() => {})
      lock.release()
    },
  }
}
