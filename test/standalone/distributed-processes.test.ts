import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { engines } from '../support/harness.ts'

const ROOT = new URL('../../', import.meta.url).pathname
const e = engines()
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function run(entry: string, extraEnv: Record<string, string>): { child: ChildProcess; output: () => string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'tally-proc-'))
  chmodSync(dataDir, 0o755)
  dirs.push(dataDir)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TALLY_DATA_DIR: dataDir,
    PORT: '0',
    TALLY_LOG_LEVEL: 'info',
  }
  // Only the engines the test names: nothing leaks in from the test run's own environment.
  for (const name of [
    'DATABASE_URL',
    'CLICKHOUSE_URL',
    'KAFKA_BROKERS',
    'S3_ENDPOINT',
    'S3_BUCKET',
    'REDIS_URL',
  ])
    delete env[name]
  Object.assign(env, extraEnv)
  const child = spawn(process.execPath, [entry], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout?.on('data', (d) => {
    out += d
  })
  child.stderr?.on('data', (d) => {
    out += d
  })
  return { child, output: () => out }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.on('exit', (code) => resolve(code))
  })
}

async function ready(p: { child: ChildProcess; output: () => string }): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!p.output().includes('"msg":"process_ready"')) {
    if (p.child.exitCode !== null) throw new Error(`exited with ${p.child.exitCode}:\n${p.output()}`)
    if (Date.now() > deadline) throw new Error(`not ready within 60 s:\n${p.output()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('distributed entries', () => {
  it.each(['services/api/main.ts', 'services/ingest/main.ts', 'services/dispatcher/main.ts'])(
    '%s refuses to start without KAFKA_BROKERS, naming it',
    async (entry) => {
      const env: Record<string, string> = { DATABASE_URL: e.postgresUrl }
      const p = run(entry, env)
      expect(await exitOf(p.child)).toBe(2)
      expect(p.output()).toMatch(/KAFKA_BROKERS is required/)
    },
  )

  it('exits 2 naming a bad variable', async () => {
    const p = run('services/ingest/main.ts', { PORT: 'http' })
    expect(await exitOf(p.child)).toBe(2)
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
      }
      const processes = [
        'services/api/main.ts',
        'services/ingest/main.ts',
        'services/dispatcher/main.ts',
      ].map((entry) => run(entry, env))
      try {
        await Promise.all(processes.map(ready))
      } finally {
        for (const p of processes) p.child.kill('SIGTERM')
      }
      const codes = await Promise.all(processes.map((p) => exitOf(p.child)))
      expect(codes).toEqual([0, 0, 0])
      for (const p of processes) {
        expect(p.output()).toContain('"msg":"shutdown_finished"')
        expect(p.output()).not.toMatch(/"level":(50|60)/)
      }
    },
    120_000,
  )
})
