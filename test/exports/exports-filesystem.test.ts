import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestTally } from '../support/harness.ts'
import { ADMIN_KEY, exportScenarios, PART_ROWS } from './store-scenarios.ts'
import { startExportTally } from './support.ts'

let tally: TestTally
beforeAll(async () => {
  tally = await startExportTally({
    env: {
      TALLY_EXPORT_PART_ROWS: String(PART_ROWS),
      TALLY_EXPORT_POLL_INTERVAL: '50ms',
      TALLY_ADMIN_API_KEY: ADMIN_KEY,
    },
  })
})
afterAll(() => tally?.close())

describe('exports to the embedded filesystem store', () => {
  it('runs against the filesystem store', () => {
    expect(tally.blobs.kind).toBe('filesystem')
  })

  exportScenarios(() => tally)
})
