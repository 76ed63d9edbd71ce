import { execFile, spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestTally } from '../support/harness.ts'
import { startWithTwoOrganizations } from './fixtures.ts'

/**
 * The ClickHouse JDBC driver at the analyst door, in the two lines data teams run today: it sends
 * settings of its own on every request (0.8 and 0.9 send async_insert=0, which a read-only user is
 * refused unless the setting may change in readonly), reads the catalogue as DBeaver does, binds
 * parameters, and reports a refusal as the server's. Needs java and mvn (the drivers come from Maven
 * Central); without them it is skipped, loudly, except under CI.
 */
const ROOT = new URL('../../', import.meta.url).pathname
const CACHE = join(ROOT, '.infra', 'cache')
const VERSIONS = ['0.8.6', '0.9.9']
const CI = process.env.CI === 'true' || process.env.CI === '1'
const hasJava = ['java', 'mvn'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0)
if (!hasJava) {
  if (CI) throw new Error('the JDBC suite needs java and mvn under CI')
  console.warn('\n!!! no java or mvn: the analyst door JDBC suite is SKIPPED !!!\n')
}
const run = promisify(execFile)

/** The driver's jars, from Maven Central once, then from the cache. */
async function driver(version: string): Promise<string> {
  const dir = join(CACHE, `clickhouse-jdbc-${version}`)
  if (existsSync(dir) && readdirSync(dir).some((f) => f.startsWith('jdbc-v2-'))) return dir
  await run(
    'mvn',
    [
      '-q',
      '-f',
      join(ROOT, 'test/sql/jdbc/pom.xml'),
      `-Djdbc.version=${version}`,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${dir}`,
    ],
    { timeout: 300_000 },
  )
  return dir
}

let tally: TestTally

describe.skipIf(!hasJava)('the analyst door with the ClickHouse JDBC driver', () => {
  beforeAll(async () => {
    ;({ tally } = await startWithTwoOrganizations())
  })
  afterAll(() => tally?.close())

  it.each(VERSIONS)(
    'clickhouse-jdbc %s: connects, queries, binds, reads the catalogue, reports a refusal',
    async (version) => {
      const jars = await driver(version)
      const door = tally.analyst
      if (!door) throw new Error('the test Tally has no analyst door')
      const { host } = new URL(door.url)
      const { stdout } = await run(
        'java',
        [
          '-cp',
          `${jars}/*`,
          join(ROOT, 'test/sql/jdbc/Probe.java'),
          `jdbc:clickhouse://${host}/${tally.config.CLICKHOUSE_DATABASE}`,
          door.username,
          door.password,
        ],
        { timeout: 120_000 },
      )
      const lines = stdout.trim().split('\n')
      expect(lines.slice(0, 4)).toEqual([
        'count 5',
        'parameter 42',
        'table request_response_rmt',
        'column model',
      ])
      expect(lines[4]).toMatch(
        /^refused Code: 497\. DB::Exception: Tally's analyst door: function file\(\) is not allowed/,
      )
    },
    400_000,
  )
})
