import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = new URL('../../', import.meta.url).pathname
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-standalone-'))
  // Embedded Postgres runs as the postgres user when we are root: it must be able to enter the dir.
  chmodSync(dir, 0o755)
  dirs.push(dir)
  return dir
}

interface Running {
  child: ChildProcess
  url: string
  apiKey: string | undefined
  output: () => string
}

/** `npm start` as a new user runs it: no engine variables at all, so everything is embedded. */
function start(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Running> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TALLY_DATA_DIR: dataDir,
    PORT: '0',
    TALLY_LOG_LEVEL: 'warn',
  }
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
  const child = spawn(process.execPath, ['services/standalone/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    out += d
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within 90 s:\n${out}`)), 90_000)
    child.on('exit', (code) => reject(new Error(`exited with ${code} before ready:\n${out}`)))
    child.stdout.on('data', () => {
      const ready = /Tally is ready in \d+ ms at (http:\/\/\S+)/.exec(out)
      if (!ready || !/OpenAPI: /.test(out)) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      const key = /^\s+(tly_[A-Za-z0-9_-]{43})$/m.exec(out)?.[1]
      resolve({ child, url: ready[1] as string, apiKey: key, output: () => out })
    })
  })
}

function stop(running: Running): Promise<number | null> {
  return new Promise((resolve) => {
    running.child.on('exit', (code) => resolve(code))
    running.child.kill('SIGTERM')
  })
}

describe('npm start', () => {
  it('starts on embedded engines, prints the key once, serves docs, shuts down cleanly and keeps data across restarts', async () => {
    const dataDir = freshDataDir()
    const first = await start(dataDir)
    expect(first.apiKey).toBeDefined()
    const headers = { authorization: `Bearer ${first.apiKey}` }
    expect((await fetch(`${first.url}/docs/`)).status).toBe(200)
    const ready = (await (await fetch(`${first.url}/readyz`)).json()) as { data: unknown }
    expect(ready.data).toEqual({
      ready: true,
      engines: { postgres: 'ok', clickhouse: 'ok', 'blobs (filesystem)': 'ok' },
    })
    const created = await fetch(`${first.url}/v1/api-keys`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'kept' }),
    })
    expect(created.status).toBe(201)
    expect(await stop(first)).toBe(0)
    // Nothing at error or fatal level on the way down.
    expect(first.output()).not.toMatch(/"level":(50|60)/)
    expect(existsSync(join(dataDir, 'postgres', 'data', 'postmaster.pid'))).toBe(false)

    const second = await start(dataDir)
    try {
      expect(second.apiKey).toBeUndefined()
      const listed = (await (await fetch(`${second.url}/v1/api-keys`, { headers })).json()) as {
        data: { name: string }[]
      }
      expect(listed.data.map((k) => k.name)).toEqual(['bootstrap', 'kept'])
    } finally {
      expect(await stop(second)).toBe(0)
    }
  }, 240_000)

  it('registers TALLY_BOOTSTRAP_API_KEY as the first admin key instead of generating one', async () => {
    const key = `tly_${'k'.repeat(43)}`
    const running = await start(freshDataDir(), { TALLY_BOOTSTRAP_API_KEY: key })
    try {
      expect(running.apiKey).toBeUndefined()
      expect(running.output()).toContain('created with TALLY_BOOTSTRAP_API_KEY')
      const res = await fetch(`${running.url}/v1/api-keys`, { headers: { authorization: `Bearer ${key}` } })
      expect(res.status).toBe(200)
    } finally {
      expect(await stop(running)).toBe(0)
    }
  }, 120_000)
})
