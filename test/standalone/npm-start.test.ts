import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  cleanUpProcesses,
  freshDataDir,
  spawnTally,
  stopTally,
  type TallyProcess,
} from '../support/processes.ts'

afterAll(cleanUpProcesses)

interface Running extends TallyProcess {
  url: string
  apiKey: string | undefined
}

/** `npm start` as a new user runs it: no engine variables at all, so everything is embedded. */
async function start(dataDir: string, extraEnv: Record<string, string> = {}): Promise<Running> {
  const p = spawnTally('services/standalone/main.ts', {
    TALLY_DATA_DIR: dataDir,
    TALLY_LOG_LEVEL: 'warn',
    ...extraEnv,
  })
  const deadline = Date.now() + 90_000
  for (;;) {
    const out = p.output()
    const ready = /Tally is ready in \d+ ms at (http:\/\/\S+)/.exec(out)
    if (ready && /OpenAPI: /.test(out)) {
      const apiKey = /^\s+(tly_[A-Za-z0-9_-]{43})$/m.exec(out)?.[1]
      return { ...p, url: ready[1] as string, apiKey }
    }
    if (p.child.exitCode !== null) throw new Error(`exited with ${p.child.exitCode} before ready:\n${out}`)
    if (Date.now() > deadline) throw new Error(`not ready within 90 s:\n${out}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('npm start', () => {
  it('starts on embedded engines, prints the key once, serves docs, shuts down cleanly and keeps data across restarts', async () => {
    const dataDir = freshDataDir('tally-standalone-')
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
    expect(await stopTally(first)).toBe(0)
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
      expect(await stopTally(second)).toBe(0)
    }
  }, 240_000)

  it('registers TALLY_BOOTSTRAP_API_KEY as the first admin key instead of generating one', async () => {
    const key = `tly_${'k'.repeat(43)}`
    const running = await start(freshDataDir('tally-standalone-'), { TALLY_BOOTSTRAP_API_KEY: key })
    try {
      expect(running.apiKey).toBeUndefined()
      expect(running.output()).toContain('created with TALLY_BOOTSTRAP_API_KEY')
      const res = await fetch(`${running.url}/v1/api-keys`, { headers: { authorization: `Bearer ${key}` } })
      expect(res.status).toBe(200)
    } finally {
      expect(await stopTally(running)).toBe(0)
    }
  }, 120_000)
})
