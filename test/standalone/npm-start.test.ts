import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isAlive } from '../../services/shared/os.ts'
import { callApi } from '../support/api.ts'
import {
  cleanUpProcesses,
  freshDataDir,
  spawnTally,
  stopTally,
  type TallyProcess,
  waitForOutput,
} from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'

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
  const ready = await waitForOutput(
    p,
    (output) => /OpenAPI: /.test(output) && /Tally is ready in \d+ ms at (http:\/\/\S+)/.exec(output),
    { what: 'the ready line and the OpenAPI address', timeoutMs: 90_000 },
  )
  const apiKey = /^\s+(tly_[A-Za-z0-9_-]{43})$/m.exec(p.output())?.[1]
  return { ...p, url: ready[1] as string, apiKey }
}

/** Runs SQL as the data teams' user printed at start, over ClickHouse's HTTP interface. */
async function analystQuery(running: TallyProcess, sql: string): Promise<{ status: number; text: string }> {
  const printed = /^\s+(http:\/\/analyst:\S+@127\.0\.0\.1:\d+)$/m.exec(running.output())?.[1]
  if (!printed) throw new Error(`no ClickHouse address for data teams in:\n${running.output()}`)
  const url = new URL(printed)
  const res = await fetch(`${url.origin}/?database=default`, {
    method: 'POST',
    body: sql,
    headers: { authorization: `Basic ${btoa(`${url.username}:${decodeURIComponent(url.password)}`)}` },
  })
  return { status: res.status, text: await res.text() }
}

/** A request logged through the API is there for the analyst user, who can change nothing. */
async function dataTeamsCanReadOnly(
  running: Running,
  admin: { headers: { authorization: string } },
): Promise<void> {
  const logged = await callApi(running.url, 'POST', '/v1/request/log', {
    as: admin,
    body: { model: 'gpt-4o-mini', request: { messages: [] }, response: {} },
  })
  expect(logged.status).toBe(201)
  const count = await analystQuery(
    running,
    "SELECT count() FROM request_response_rmt WHERE model = 'gpt-4o-mini' FORMAT TSV",
  )
  expect(count).toEqual({ status: 200, text: '1\n' })
  for (const sql of [
    'INSERT INTO request_response_rmt (request_id) VALUES (generateUUIDv4())',
    'CREATE TABLE mine (x UInt8) ENGINE = Memory',
    'DROP TABLE request_response_rmt',
    'SELECT count() FROM request_response_rmt SETTINGS readonly = 0',
  ]) {
    const answer = await analystQuery(running, sql)
    const refused =
      answer.status >= 400 && /readonly|Not enough privileges|is not allowed here/i.test(answer.text)
    expect({ sql, refused }).toEqual({ sql, refused: true })
  }
}

/**
 * What the engines' processes could leak: their environments hold nothing of Tally's, the
 * passwords are files only Tally's user reads, and no organization's SQL reads the host.
 */
async function secretsOutOfReach(running: Running, dataDir: string, secret: string): Promise<void> {
  const state = JSON.parse(readFileSync(join(dataDir, 'clickhouse-server', 'server.json'), 'utf8'))
  const postmaster = Number(
    readFileSync(join(dataDir, 'postgres', 'data', 'postmaster.pid'), 'utf8').split('\n')[0],
  )
  for (const pid of [state.pid as number, postmaster]) {
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
    expect(environ, `pid ${pid}`).not.toContain(secret)
    expect(environ, `pid ${pid}`).not.toMatch(/TALLY_|DATABASE_URL|CLICKHOUSE_/)
  }
  expect(statSync(join(dataDir, 'secrets')).mode & 0o777).toBe(0o700)
  expect(statSync(join(dataDir, 'secrets', 'clickhouse.json')).mode & 0o777).toBe(0o600)
  expect(existsSync(join(dataDir, 'clickhouse-server', 'credentials.json'))).toBe(false)
  expect(statSync(join(dataDir, 'blobs')).mode & 0o777).toBe(0o700)
  expect(statSync(join(dataDir, 'blobs', 'link-secret')).mode & 0o777).toBe(0o600)
  expect(statSync(join(dataDir, 'postgres', 'password')).mode & 0o777).toBe(0o600)
  // The printed address is Tally's analyst door, not the engine's port, which does not know it.
  const printed = new URL(/^\s+(http:\/\/analyst:\S+@127\.0\.0\.1:\d+)$/m.exec(running.output())?.[1] ?? '')
  expect(Number(printed.port)).not.toBe(state.httpPort)
  const direct = await fetch(`http://127.0.0.1:${state.httpPort}/?query=SELECT%201`, {
    headers: { authorization: `Basic ${btoa(`analyst:${decodeURIComponent(printed.password)}`)}` },
  })
  expect(direct.status).not.toBe(200)
  const admin = { headers: { authorization: `Bearer ${running.apiKey}` } }
  for (const sql of [
    "SELECT file('/proc/self/environ') AS e",
    "SELECT file(concat(getServerSetting('path'), '/../credentials.json')) AS c",
    "SELECT file('/etc/hostname') AS h",
  ]) {
    const res = await callApi(running.url, 'POST', '/v1/sql/query', { as: admin, body: { sql } })
    expect(res.status, sql).toBe(400)
    expect(res.error, sql).toMatch(/^sql: function (file|getServerSetting)\(\) is not allowed/)
  }
}

describe('npm start', () => {
  it('starts on embedded engines, prints the key once, serves docs, shuts down cleanly and keeps data across restarts', async () => {
    const dataDir = freshDataDir('tally-standalone-')
    const adminKey = `tally-admin-${'s'.repeat(40)}`
    const first = await start(dataDir, { TALLY_ADMIN_API_KEY: adminKey })
    expect(first.apiKey).toBeDefined()
    const admin = { headers: { authorization: `Bearer ${first.apiKey}` } }
    expect((await fetch(`${first.url}/docs/`)).status).toBe(200)
    const ready = await callApi(first.url, 'GET', '/readyz')
    expect(ready.data).toEqual({
      ready: true,
      engines: { postgres: 'ok', clickhouse: 'ok', 'blobs (filesystem)': 'ok' },
    })
    const created = await callApi(first.url, 'POST', '/v1/api-keys', { as: admin, body: { name: 'kept' } })
    expect(created.status).toBe(201)
    await dataTeamsCanReadOnly(first, admin)
    await secretsOutOfReach(first, dataDir, adminKey)
    expect(await stopTally(first)).toBe(0)
    // Nothing at error or fatal level on the way down.
    expect(first.output()).not.toMatch(/"level":(50|60)/)
    expect(existsSync(join(dataDir, 'postgres', 'data', 'postmaster.pid'))).toBe(false)

    const second = await start(dataDir)
    try {
      expect(second.apiKey).toBeUndefined()
      const listed = await callApi(second.url, 'GET', '/v1/api-keys', { as: admin })
      expect(listed.data.map((k: { name: string }) => k.name)).toEqual(['bootstrap', 'kept'])
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
      const res = await callApi(running.url, 'GET', '/v1/api-keys', {
        headers: { authorization: `Bearer ${key}` },
      })
      expect(res.status).toBe(200)
    } finally {
      expect(await stopTally(running)).toBe(0)
    }
  }, 120_000)
})

describe('npm start with an embedded engine gone', () => {
  const enginePid = {
    clickhouse: (dataDir: string) =>
      JSON.parse(readFileSync(join(dataDir, 'clickhouse-server', 'server.json'), 'utf8')).pid as number,
    postgres: (dataDir: string) =>
      JSON.parse(readFileSync(join(dataDir, 'postgres', 'server.json'), 'utf8')).pid as number,
  }

  it.each(['clickhouse', 'postgres'] as const)(
    'exits 1 when its %s is killed, naming it, instead of answering without it',
    async (engine) => {
      const dataDir = freshDataDir('tally-standalone-')
      const running = await start(dataDir)
      const pids = { clickhouse: enginePid.clickhouse(dataDir), postgres: enginePid.postgres(dataDir) }
      process.kill(pids[engine], 'SIGKILL')
      expect(await running.exited).toBe(1)
      const fatal = running
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{') && JSON.parse(line).level === 60)
        .map((line) => JSON.parse(line))
      expect(fatal).toEqual([
        expect.objectContaining({ engine, msg: expect.stringMatching(/^embedded_engine_lost: /) }),
      ])
      // No engine is left behind for the restarted process to trip over.
      await waitFor(() => !isAlive(pids.clickhouse) && !isAlive(pids.postgres), {
        what: 'both engines to have ended with the process',
        timeoutMs: 20_000,
      })
    },
    120_000,
  )
})
