import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import unit from '../../vitest.unit.config.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const include = unit.test?.include ?? []

// What only a test with engines does: the harness and engine helpers, or the global set-up's values.
const NEEDS_ENGINES = [
  /support\/(harness|engines|api|clickhouse|kafka|kafka-broker|postgres-process|scratch-database)\.ts'/,
  /\binject\(/,
]

describe('the unit tier (vitest.unit.config.ts)', () => {
  it('starts no engine: no global set-up', () => {
    expect(unit.test?.globalSetup).toBeUndefined()
    expect(unit.test?.setupFiles).toBeUndefined()
  })

  it('lists test files that exist and that use no engine', () => {
    const listed = include.filter((pattern) => !pattern.includes('*'))
    expect(listed.length).toBeGreaterThan(0)
    for (const file of listed) {
      expect({ file, exists: existsSync(join(ROOT, file)) }).toEqual({ file, exists: true })
      const source = readFileSync(join(ROOT, file), 'utf8')
      expect({ file, engines: NEEDS_ENGINES.filter((p) => p.test(source)).map(String) }).toEqual({
        file,
        engines: [],
      })
    }
  })
})
