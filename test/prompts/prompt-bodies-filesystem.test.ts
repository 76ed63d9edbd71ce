import { readdirSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { startTestTally, type TestTally } from '../support/harness.ts'
import { blobStoreScenarios } from './blob-store-scenarios.ts'

let tally: TestTally
beforeAll(async () => {
  // PORT=0 (the harness default): the embedded store's links must still name the real port.
  tally = await startTestTally({ env: { TALLY_SIGNED_LINK_TTL: '2s' } })
})
afterAll(() => tally?.close())

describe('prompt bodies in the embedded filesystem store', () => {
  blobStoreScenarios(
    () => tally,
    async (prefix) => {
      const root = resolve(tally.config.TALLY_DATA_DIR, 'blobs', 'objects')
      try {
        return readdirSync(join(root, prefix), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => relative(root, join(e.parentPath, e.name)))
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
        throw err
      }
    },
  )
})
