import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { engines } from '../support/harness.ts'
import {
  cleanUpProcesses,
  freshDataDir,
  spawnTally,
  stopTally,
  type TallyProcess,
  waitForOutput,
} from '../support/processes.ts'

const e = engines()
const RECORD_MODULES = new URL('../support/record-modules.ts', import.meta.url).pathname
afterAll(cleanUpProcesses)

const ready = (p: TallyProcess) =>
  waitForOutput(p, (output) => output.includes('"msg":"process_ready"'), {
    what: 'process_ready',
    timeoutMs: 60_000,
  })

const ENTRIES = ['services/api/main.ts', 'services/ingest/main.ts', 'services/dispatcher/main.ts']

describe('distributed entries', () => {
  it.each(ENTRIES)('%s refuses to start without KAFKA_BROKERS, naming it', async (entry) => {
    const p = spawnTally(entry, { TALLY_DATA_DIR: freshDataDir(), DATABASE_URL: e.postgresUrl })
    expect(await p.exited).toBe(2)
    expect(p.output()).toMatch(/KAFKA_BROKERS is required/)
  })

  it('exits 2 naming a bad variable', async () => {
    const p = spawnTally('services/ingest/main.ts', { TALLY_DATA_DIR: freshDataDir(), PORT: 'http' })
    expect(await p.exited).toBe(2)
    expect(p.output()).toMatch(/Invalid configuration:\n\s+PORT: /)
  })

  it.skipIf(!e.kafkaBrokers)(
    'each starts against Kafka, connects, and shuts down cleanly on SIGTERM',
    async () => {
      const topic = `tally.test.proc.${Date.now()}`
      const env = {
        KAFKA_BROKERS: e.kafkaBrokers ?? '',
        DATABASE_URL: e.postgresUrl,
        TALLY_REQUEST_TOPIC: topic,
        TALLY_DLQ_TOPIC: `${topic}.dlq`,
        TALLY_CONSUMER_GROUP_PREFIX: `${topic}.`,
      }
      const dirs = ENTRIES.map(() => freshDataDir())
      const moduleLogs = dirs.map((dir) => join(dir, 'modules.log'))
      const processes = ENTRIES.map((entry, i) =>
        spawnTally(entry, {
          ...env,
          TALLY_DATA_DIR: dirs[i] as string,
          NODE_OPTIONS: `--import ${RECORD_MODULES}`,
          TALLY_TEST_MODULE_LOG: moduleLogs[i] as string,
        }),
      )
      await Promise.all(processes.map(ready))
      expect(await Promise.all(processes.map(stopTally))).toEqual([0, 0, 0])
      for (const p of processes) {
        expect(p.output()).toContain('"msg":"shutdown_finished"')
        expect(p.output()).not.toMatch(/"level":(50|60)/)
      }
      // Only the API loads the HTTP framework: the consumer processes never do.
      const loadsFastify = moduleLogs.map((file) =>
        /\/node_modules\/(fastify|@fastify\/[^/]+|fastify-[^/]+)\//.test(readFileSync(file, 'utf8')),
      )
      expect(Object.fromEntries(ENTRIES.map((entry, i) => [entry, loadsFastify[i]]))).toEqual({
        'services/api/main.ts': true,
        'services/ingest/main.ts': false,
        'services/dispatcher/main.ts': false,
      })
    },
    120_000,
  )

  it('services/exporter/main.ts starts without Kafka, never loads the HTTP framework, and stops cleanly', async () => {
    const dir = freshDataDir()
    const moduleLog = join(dir, 'modules.log')
    const p = spawnTally('services/exporter/main.ts', {
      DATABASE_URL: e.postgresUrl,
      CLICKHOUSE_URL: e.clickhouseUrl,
      CLICKHOUSE_DATABASE: `test_${process.pid}`,
      TALLY_DATA_DIR: dir,
      NODE_OPTIONS: `--import ${RECORD_MODULES}`,
      TALLY_TEST_MODULE_LOG: moduleLog,
    })
    await ready(p)
    expect(p.output()).toContain('"msg":"exporter_started"')
    expect(await stopTally(p)).toBe(0)
    expect(p.output()).toContain('"msg":"shutdown_finished"')
    expect(p.output()).not.toMatch(/"level":(50|60)/)
    const loaded = readFileSync(moduleLog, 'utf8')
    expect(loaded).toMatch(/services\/exporter\/worker\.ts/)
    expect(loaded).not.toMatch(/\/node_modules\/(fastify|@fastify\/[^/]+|fastify-[^/]+)\//)
  }, 60_000)
})
