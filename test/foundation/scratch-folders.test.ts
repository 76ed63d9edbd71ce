import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { openScratch } from '../../services/shared/scratch.ts'
import { cleanUpProcesses, spawnCommand, type TallyProcess, waitForOutput } from '../support/processes.ts'

const log = pino({ level: 'silent' })
const dataDir = mkdtempSync(join(tmpdir(), 'tally-scratch-'))
afterAll(async () => {
  await cleanUpProcesses()
  rmSync(dataDir, { recursive: true, force: true })
})

/** A process that opens its scratch folder, writes a part file in it, says where, and waits. */
function holder(): TallyProcess {
  const script = `
    import { openScratch } from './services/shared/scratch.ts'
    import { mkdirSync, writeFileSync } from 'node:fs'
    const scratch = await openScratch(${JSON.stringify(dataDir)}, { info() {} })
    mkdirSync(scratch.dir + '/export-1')
    writeFileSync(scratch.dir + '/export-1/part-00001.jsonl', '{}\\n')
    console.log('scratch=' + scratch.dir)
    setInterval(() => {}, 60_000)`
  return spawnCommand(process.execPath, ['--input-type=module', '-e', script], process.env)
}
const folderOf = (p: TallyProcess) =>
  waitForOutput(p, (out) => /scratch=(\S+)/.exec(out)?.[1], { what: 'its scratch folder', timeoutMs: 20_000 })

describe('scratch folders under TALLY_DATA_DIR', () => {
  it("a start removes the folders of processes killed with SIGKILL, and keeps the live ones'", async () => {
    const killed = holder()
    const live = holder()
    const [killedDir, liveDir] = await Promise.all([folderOf(killed), folderOf(live)])
    killed.child.kill('SIGKILL')
    await killed.exited
    expect(existsSync(join(killedDir, 'export-1', 'part-00001.jsonl'))).toBe(true)

    const scratch = await openScratch(dataDir, log)
    try {
      expect(existsSync(killedDir)).toBe(false)
      expect(existsSync(`${killedDir}.lock`)).toBe(false)
      expect(existsSync(join(liveDir, 'export-1', 'part-00001.jsonl'))).toBe(true)
      expect(existsSync(scratch.dir)).toBe(true)
    } finally {
      await scratch.close()
    }
    expect(existsSync(scratch.dir)).toBe(false)
    live.child.kill('SIGKILL')
    await live.exited
  })

  it('a sweep keeps a lock file whose folder is not made yet, and folders of this process', async () => {
    const root = join(dataDir, 'tmp')
    mkdirSync(root, { recursive: true })
    writeFileSync(join(root, 'starting.lock'), '')
    const a = await openScratch(dataDir, log)
    const b = await openScratch(dataDir, log)
    try {
      expect(await a.sweep()).toBe(0)
      expect(readdirSync(root).sort()).toEqual(
        [
          'starting.lock',
          ...[a.dir, b.dir].flatMap((d) => [d.slice(root.length + 1), `${d.slice(root.length + 1)}.lock`]),
        ].sort(),
      )
    } finally {
      await a.close()
      await b.close()
    }
  })
})
