import { spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { get } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { afterAll, describe, expect, it } from 'vitest'
import type {
  ClickHouseServer,
  ClickHouseServerOptions,
} from '../../services/shared/clickhouse-server/handle.ts'
import { cpuTicks, startTicks } from '../../services/shared/clickhouse-server/proc.ts'
import { startClickHouseServer } from '../../services/shared/clickhouse-server/server.ts'
import { isAlive } from '../../services/shared/os.ts'
import { waitFor } from '../support/wait.ts'

const SERVER_MODULE = new URL('../../services/shared/clickhouse-server/server.ts', import.meta.url).pathname

const dirs: string[] = []
const servers: ClickHouseServer[] = []

/** A server's data directory, in a temporary directory that also holds its secrets directory. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-ch-server-'))
  dirs.push(dir)
  return join(dir, 'engine')
}

const secretsOf = (dataDir: string) => join(dirname(dataDir), 'secrets')

/** Keeps what the launcher logs, so tests can assert on it. */
function recordingLog() {
  const lines: { level: string; msg: string; obj: object }[] = []
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, obj })
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } }
}

async function start(options: Partial<ClickHouseServerOptions> & { dataDir: string }) {
  const server = await startClickHouseServer({
    log: recordingLog().log,
    secretsDir: secretsOf(options.dataDir),
    ...options,
  })
  servers.push(server)
  return server
}

/**
 * One request on a connection of its own, closed after it: an idle keep-alive connection (as
 * fetch keeps) would make ClickHouse wait 5 s for it when it stops.
 */
function httpGet(url: string, auth?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, auth }, (res) => {
      let body = ''
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
  })
}

const ping = async (endpoint: string) => (await httpGet(`${endpoint}/ping`)).body

/** A client that keeps quiet about the errors the tests provoke. */
const clientFor = (server: ClickHouseServer) =>
  createClient({ url: server.url, log: { level: ClickHouseLogLevel.OFF } })

/** Another process that starts a server in dataDir and keeps it until it is killed. */
function spawnOwner(dataDir: string) {
  return spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { startClickHouseServer } from ${JSON.stringify(SERVER_MODULE)}
       const log = { info() {}, warn() {}, error() {} }
       const server = await startClickHouseServer({ dataDir: ${JSON.stringify(dataDir)}, secretsDir: ${JSON.stringify(secretsOf(dataDir))}, log })
       console.log(JSON.stringify({ pid: server.pid, endpoint: server.endpoint }))
       setInterval(() => {}, 1 << 30)`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
}

function ownerStarted(owner: ReturnType<typeof spawnOwner>) {
  return new Promise<{ pid: number; endpoint: string }>((resolve, reject) => {
    owner.stdout.once('data', (line) => resolve(JSON.parse(String(line))))
    owner.once('exit', (code) => reject(new Error(`owner exited with ${code} before starting ClickHouse`)))
  })
}

/**
 * Rewrites dataDir's state file as if the process that started its server had died: its pid gone,
 * or given since to another process (this one, which started at another time).
 */
function orphan(dataDir: string, how: 'pid gone' | 'pid reused' = 'pid gone'): void {
  const statePath = join(dataDir, 'server.json')
  const state = JSON.parse(readFileSync(statePath, 'utf8'))
  const owner =
    how === 'pid gone'
      ? { ownerPid: spawnSync(process.execPath, ['-e', '']).pid }
      : { ownerPid: process.pid, ownerStart: (startTicks(process.pid) ?? 0) + 1 }
  writeFileSync(statePath, JSON.stringify({ ...state, ...owner }))
}

afterAll(async () => {
  for (const server of servers.reverse()) await server.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('ClickHouse as a local HTTP server from libchdb.so', () => {
  it('serves /ping and SQL, and keeps MergeTree data across a stop and a start', async () => {
    const dataDir = tempDir()
    const first = await start({ dataDir })
    expect(first.attached).toBe(false)
    expect(await ping(first.endpoint)).toBe('Ok.\n')

    const client = clientFor(first)
    await client.command({
      query: 'CREATE TABLE kept (id UInt32, note String) ENGINE = MergeTree ORDER BY id',
    })
    await client.insert({
      table: 'kept',
      values: [
        { id: 1, note: 'a' },
        { id: 2, note: 'b' },
      ],
      format: 'JSONEachRow',
    })
    await client.close()
    await first.stop()
    expect(isAlive(first.pid)).toBe(false)

    const second = await start({ dataDir })
    expect(second.pid).not.toBe(first.pid)
    const again = clientFor(second)
    const rs = await again.query({ query: 'SELECT id, note FROM kept ORDER BY id', format: 'JSONEachRow' })
    expect(await rs.json()).toEqual([
      { id: 1, note: 'a' },
      { id: 2, note: 'b' },
    ])
    await again.close()
    await second.stop()
  }, 60_000)

  it('refuses HTTP clients without the password, and lets the local-only user run nothing', async () => {
    const server = await start({ dataDir: tempDir() })
    const wrongPassword = await httpGet(`${server.endpoint}/?query=SELECT%201`, 'tally:wrong')
    expect(wrongPassword.status).toBe(403)
    // `default` is the user clickhouse-local runs as, without a password: over HTTP no statement
    // of it parses, not even one calling file(), which checks no grant.
    for (const sql of ["SELECT file('/etc/hostname')", 'SELECT 1', '1', 'SYSTEM STOP LISTEN HTTP']) {
      const asDefault = await httpGet(`${server.endpoint}/?query=${encodeURIComponent(sql)}`)
      expect(asDefault.status).not.toBe(200)
      expect(asDefault.body).toMatch(/Max query size exceeded|SYNTAX_ERROR/)
    }
    for (const setting of ['max_query_size=1000000', 'implicit_select=1']) {
      const changed = await httpGet(`${server.endpoint}/?${setting}&query=SELECT%201`)
      expect(changed.body).toMatch(/SETTING_CONSTRAINT_VIOLATION|should not be changed/)
    }
    expect(await ping(server.endpoint)).toBe('Ok.\n')
    await server.stop()
  })

  it("moves an older data directory's passwords out of the engine's reach, completing and keeping them", async () => {
    const dataDir = tempDir()
    mkdirSync(dataDir, { recursive: true })
    // credentials.json as the first versions wrote it, in the engine's own directory: Tally's user only.
    writeFileSync(
      join(dataDir, 'credentials.json'),
      '{"username":"tally","password":"kept-password-123"}\n',
      {
        mode: 0o600,
      },
    )
    const server = await start({ dataDir })
    expect(server.password).toBe('kept-password-123')
    expect(existsSync(join(dataDir, 'credentials.json'))).toBe(false)
    const path = join(secretsOf(dataDir), 'clickhouse.json')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(statSync(secretsOf(dataDir)).mode & 0o777).toBe(0o700)
    const stored = JSON.parse(readFileSync(path, 'utf8'))
    expect(stored).toMatchObject({
      username: 'tally',
      password: 'kept-password-123',
      analyst: { username: 'analyst', password: expect.any(String) },
      analystEngine: { username: 'tally_analyst', password: expect.any(String) },
      sql: { username: 'tally_sql', password: expect.any(String) },
    })
    // What data teams sign in with at Tally's door is not a password of the engine's.
    const asDoorUser = await httpGet(
      `${server.endpoint}/?query=SELECT%201`,
      `analyst:${stored.analyst.password as string}`,
    )
    expect(asDoorUser.status).not.toBe(200)
    const asSql = createClient({ url: server.sqlUrl, log: { level: ClickHouseLogLevel.OFF } })
    const who = await asSql.query({ query: 'SELECT currentUser() AS user', format: 'JSONEachRow' })
    expect(await who.json()).toEqual([{ user: 'tally_sql' }])
    await expect(asSql.query({ query: 'SELECT * FROM system.processes' })).rejects.toThrow(
      /ACCESS_DENIED|privileges/,
    )
    await asSql.close()
    await server.stop()
  })

  it('attaches to the server already serving a data directory, and leaves it running on stop()', async () => {
    const dataDir = tempDir()
    const owner = await start({ dataDir })
    const other = await start({ dataDir })
    expect(other.attached).toBe(true)
    expect(other.pid).toBe(owner.pid)
    expect(other.url).toBe(owner.url)
    await other.stop()
    expect(await ping(owner.endpoint)).toBe('Ok.\n')
    await owner.stop()
    expect(isAlive(owner.pid)).toBe(false)
  })

  it('starts one server when two starts race for the same data directory', async () => {
    const dataDir = tempDir()
    const both = await Promise.all([start({ dataDir }), start({ dataDir })])
    expect(both.map((s) => s.attached).sort()).toEqual([false, true])
    expect(both[0]?.pid).toBe(both[1]?.pid)
    for (const server of both.filter((s) => s.attached)) await server.stop()
    for (const server of both.filter((s) => !s.attached)) await server.stop()
  }, 60_000)

  it('ignores a state file whose process is gone', async () => {
    const dataDir = tempDir()
    const dead = spawn(process.execPath, ['-e', ''])
    const deadPid = await new Promise<number>((resolve) =>
      dead.once('exit', () => resolve(dead.pid as number)),
    )
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(join(dataDir, 'server.json'), JSON.stringify({ pid: deadPid, httpPort: 1, startedAt: '' }))
    const server = await start({ dataDir })
    expect(server.attached).toBe(false)
    expect(server.pid).not.toBe(deadPid)
    expect(await ping(server.endpoint)).toBe('Ok.\n')
    await server.stop()
  })

  it('stops when its owner is killed with SIGKILL: no orphan server', async () => {
    const dataDir = tempDir()
    const owner = spawnOwner(dataDir)
    const started = await ownerStarted(owner)
    expect(await ping(started.endpoint)).toBe('Ok.\n')
    owner.kill('SIGKILL')
    await waitFor(() => !isAlive(started.pid), {
      timeoutMs: 15_000,
      what: `ClickHouse child ${started.pid} to exit after its owner was killed`,
    })
    await expect(ping(started.endpoint)).rejects.toThrow()
  }, 60_000)

  it('does not attach to a server whose owner is gone: it starts its own once that server has ended', async () => {
    const dataDir = tempDir()
    const running = await start({ dataDir })
    // As if the process that started it had been killed: the server still runs and holds the lock.
    orphan(dataDir)
    const next = start({ dataDir })
    await running.stop()
    const own = await next
    expect(own.attached).toBe(false)
    expect(own.pid).not.toBe(running.pid)
    expect(await ping(own.endpoint)).toBe('Ok.\n')
    await own.stop()
  }, 60_000)

  it.each(['pid gone', 'pid reused'] as const)(
    'gives up at its deadline naming the lock when a server whose owner is gone (%s) never ends',
    async (how) => {
      const dataDir = tempDir()
      const running = await start({ dataDir })
      orphan(dataDir, how)
      const users = readFileSync(join(dataDir, 'users.xml'), 'utf8')
      // Asked for another analyst database: it must not rewrite the files of a server it does not own.
      await expect(start({ dataDir, deadlineMs: 10_000, analystDatabase: 'elsewhere' })).rejects.toThrow(
        /holds server\.lock .*its owner has gone and it is still shutting down, within 10000 ms/,
      )
      expect(readFileSync(join(dataDir, 'users.xml'), 'utf8')).toBe(users)
      expect(await ping(running.endpoint)).toBe('Ok.\n')
      await running.stop()
    },
    60_000,
  )

  it('a process started right after the owner was killed starts a server of its own, not the dying one', async () => {
    const dataDir = tempDir()
    const owner = spawnOwner(dataDir)
    const started = await ownerStarted(owner)
    owner.kill('SIGKILL')
    await new Promise((resolve) => owner.once('exit', resolve))
    const next = await start({ dataDir })
    expect(next.attached).toBe(false)
    expect(next.pid).not.toBe(started.pid)
    expect(await ping(next.endpoint)).toBe('Ok.\n')
    await next.stop()
  }, 60_000)

  it('tells a listener added after the server ended, owned or attached', async () => {
    const { lines, log } = recordingLog()
    const dataDir = tempDir()
    const owner = await start({ dataDir, log })
    const { lines: attachedLines, log: attachedLog } = recordingLog()
    const other = await start({ dataDir, log: attachedLog })
    expect(other.attached).toBe(true)
    process.kill(owner.pid, 'SIGKILL')
    await waitFor(() => lines.some((l) => l.msg === 'clickhouse_server_exited: died'), {
      timeoutMs: 10_000,
      what: 'the owner to see its server die',
    })
    await waitFor(() => attachedLines.some((l) => l.msg === 'clickhouse_server_gone'), {
      timeoutMs: 10_000,
      what: 'the attached process to see the server gone',
    })
    const told = await Promise.all(
      [owner, other].map((s) => new Promise<boolean>((resolve) => s.onExit(() => resolve(true)))),
    )
    expect(told).toEqual([true, true])
  }, 60_000)

  it('tells the owner when the server dies', async () => {
    const { lines, log } = recordingLog()
    const server = await start({ dataDir: tempDir(), log })
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      server.onExit(resolve),
    )
    process.kill(server.pid, 'SIGKILL')
    const exit = await exited
    // Uncontained, the child's own signal; contained, the launcher's report: unshare 2.38 ends with
    // status 1 when its child was killed by a signal (it fails to re-raise it).
    expect(exit.signal === 'SIGKILL' || (exit.code !== null && exit.code !== 0)).toBe(true)
    expect(lines.some((l) => l.msg === 'clickhouse_server_exited: died')).toBe(true)
  })

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops cleanly on a %s sent to the server itself: exit 0, the owner told, what was written kept',
    async (signal) => {
      // As a service manager stopping the whole process group sends it. The child's stop deadline
      // (stopDeadlineMs) bounds the wait: past it, it would end with EXIT.stopTimeout, not 0.
      const { lines, log } = recordingLog()
      const dataDir = tempDir()
      const server = await start({ dataDir, log, stopDeadlineMs: 10_000 })
      const client = clientFor(server)
      await client.command({ query: 'CREATE TABLE kept (id UInt32) ENGINE = MergeTree ORDER BY id' })
      await client.insert({ table: 'kept', values: [{ id: 7 }], format: 'JSONEachRow' })
      await client.close()
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        server.onExit(resolve),
      )
      process.kill(server.pid, signal)
      expect(await exited).toMatchObject({ code: 0, signal: null })
      expect(isAlive(server.pid)).toBe(false)
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          msg: 'clickhouse_server_stopping',
          obj: expect.objectContaining({ reason: signal }),
        }),
      )
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: `clickhouse_server_exited: stopped (${signal})` }),
      )
      const again = clientFor(await start({ dataDir }))
      const rs = await again.query({ query: 'SELECT id FROM kept', format: 'JSONEachRow' })
      expect(await rs.json()).toEqual([{ id: 7 }])
      await again.close()
    },
  )

  it('stop() ends the server within its deadline even while a client holds a connection open', async () => {
    const { lines, log } = recordingLog()
    const dataDir = tempDir()
    const server = await startClickHouseServer({
      dataDir,
      secretsDir: secretsOf(dataDir),
      log,
      stopDeadlineMs: 2_000,
    })
    // An idle keep-alive connection: ClickHouse would wait 5 s for it at shutdown.
    const client = clientFor(server)
    await client.query({ query: 'SELECT 1' }).then((rs) => rs.text())
    const began = Date.now()
    await server.stop()
    expect(Date.now() - began).toBeLessThan(4_000)
    expect(isAlive(server.pid)).toBe(false)
    expect(lines.some((l) => l.msg.startsWith('clickhouse_server_killed'))).toBe(true)
    await client.close()
  })

  it('fails with a clear error when its port is taken', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    try {
      await expect(start({ dataDir: tempDir(), httpPort: port, deadlineMs: 20_000 })).rejects.toThrow(
        /exited .* while waiting for .*Address already in use/s,
      )
    } finally {
      blocker.close()
    }
  })

  it('fails with a clear error when its data directory cannot be made', async () => {
    const dir = tempDir()
    mkdirSync(dir)
    const file = join(dir, 'a-file')
    writeFileSync(file, '')
    await expect(start({ dataDir: join(file, 'clickhouse') })).rejects.toThrow(/ENOTDIR/)
  })

  it('gives up at its deadline, saying what it waited for, and leaves no process behind', async () => {
    const dataDir = tempDir()
    const error = await start({ dataDir, deadlineMs: 100 }).then(
      () => undefined,
      (err: Error) => err,
    )
    expect(error?.message).toMatch(/gave up after 100 ms waiting for .*; killed pid (\d+)/)
    const pid = Number(/killed pid (\d+)/.exec(error?.message ?? '')?.[1])
    await waitFor(() => !isAlive(pid), { timeoutMs: 5_000, what: `killed child ${pid} to be gone` })
  })

  describe('queries', () => {
    let server: ClickHouseServer
    let client: ReturnType<typeof createClient>
    const heavy = 'SELECT count() FROM numbers(1e11) WHERE sipHash64(number) % 7 = 3'

    it('cancels a query at max_execution_time while cheap queries keep being answered', async () => {
      server = await start({ dataDir: tempDir() })
      client = clientFor(server)
      const slow = client
        .query({ query: heavy, clickhouse_settings: { max_execution_time: 2 } })
        .then((rs) => rs.text())
      const latencies: number[] = []
      let settled = false
      void slow
        .finally(() => {
          settled = true
        })
        .catch(() => {})
      while (!settled) {
        const began = performance.now()
        await client.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((rs) => rs.json())
        latencies.push(performance.now() - began)
      }
      await expect(slow).rejects.toMatchObject({ code: '159', type: 'TIMEOUT_EXCEEDED' })
      // Small queries kept being answered while the slow one ran: it held no lock they wait on.
      expect(latencies.length).toBeGreaterThan(20)
    })

    it('runs queries in parallel', async () => {
      const began = Date.now()
      await Promise.all(
        Array.from({ length: 4 }, () => client.query({ query: 'SELECT sleep(1)' }).then((rs) => rs.text())),
      )
      expect(Date.now() - began).toBeLessThan(2_500)
    })

    it('uses almost no CPU while idle', async () => {
      const before = cpuTicks(server.pid)
      const windowMs = 2_000
      // A measurement window, not a wait for a condition.
      await new Promise((resolve) => setTimeout(resolve, windowMs))
      const ticks = cpuTicks(server.pid) - before
      // 100 ticks per second of one core: under 5 % of a core.
      expect(ticks).toBeLessThan((windowMs / 1000) * 100 * 0.05)
      await client.close()
      await server.stop()
    })
  })
})

describe('containment of the server process', () => {
  const CI = process.env.CI === 'true' || process.env.CI === '1'
  /** CapEff / CapBnd holding CAP_SYS_NICE (23) alone. */
  const CAP_SYS_NICE_ONLY = '0000000000800000'

  /** Reading a value of /proc/<pid>/status. */
  const statusOf = (pid: number, field: string) =>
    new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim()

  it('shuts it in: a root of its own data only, no capabilities, no environment, a host name of its own', async () => {
    const dataDir = tempDir()
    const server = await start({ dataDir, containment: CI ? 'required' : 'auto' })
    if (!server.containment.startsWith('contained')) {
      console.warn(`!!! containment not available here, its checks skipped: ${server.containment} !!!`)
      return
    }
    // As root it keeps CAP_SYS_NICE and nothing else (query priorities); otherwise nothing.
    const capabilities = process.getuid?.() === 0 ? CAP_SYS_NICE_ONLY : '0000000000000000'
    expect(statusOf(server.pid, 'CapEff')).toBe(capabilities)
    expect(statusOf(server.pid, 'CapBnd')).toBe(capabilities)
    expect(statusOf(server.pid, 'CapInh')).toBe('0000000000000000')
    expect(statusOf(server.pid, 'CapAmb')).toBe('0000000000000000')
    expect(statusOf(server.pid, 'NoNewPrivs')).toBe('1')
    if (process.getuid?.() === 0) expect(statusOf(server.pid, 'Uid')?.split(/\s+/)[0]).not.toBe('0')
    expect(readFileSync(`/proc/${server.pid}/environ`, 'utf8')).toBe('')
    expect(readlinkSync(`/proc/${server.pid}/root`)).toBe(join(dataDir, 'root'))

    // Tally's own user has every right in the engine: even it sees nothing of the host.
    const client = clientFor(server)
    const one = async (sql: string) =>
      client.query({ query: sql, format: 'JSONEachRow' }).then(
        async (rs) => JSON.stringify(await rs.json()),
        (err: Error) => `error: ${err.message}`,
      )
    expect(await one('SELECT hostName() AS h')).toBe('[{"h":"tally-clickhouse"}]')
    for (const path of [
      '/etc/passwd',
      '/etc/hostname',
      join(secretsOf(dataDir), 'clickhouse.json'),
      '/root/.bashrc',
    ])
      expect(await one(`SELECT file('${path}') AS f`)).toMatch(/FILE_DOESNT_EXIST|Cannot open file/)
    const top = await one(
      "SELECT arraySort(groupArray(name)) AS names FROM filesystem('/') WHERE path = '/' AND name != ''",
    )
    expect(top).toBe(`[{"names":${JSON.stringify(['clickhouse', 'dev', 'proc', 'tmp'])}}]`)
    // Its data directory is at a neutral path: nothing it shows names a path of the host.
    expect(await one('SELECT groupUniqArray(data_path) AS paths FROM system.databases')).toBe(
      '[{"paths":["/clickhouse/data/"]}]',
    )
    // Its process list is its own: no other process's environment to read.
    const pids =
      "SELECT groupArray(name) AS pids FROM filesystem('/proc') WHERE path = '/proc' AND match(name, '^[0-9]+$')"
    expect(await one(pids)).toBe('[{"pids":["1"]}]')
    await client.close()
  })

  it("as root, runs a query's threads at the priority it asks for, and sets them back after", async () => {
    const server = await start({ dataDir: tempDir(), containment: CI ? 'required' : 'auto' })
    if (process.getuid?.() !== 0 || !server.containment.startsWith('contained')) {
      console.warn('!!! not root or not contained: the query priority check is skipped !!!')
      return
    }
    /** The nice value of each of the server's threads (field 19 of /proc/<pid>/task/<tid>/stat). */
    const nices = () =>
      readdirSync(`/proc/${server.pid}/task`).flatMap((tid) => {
        try {
          const stat = readFileSync(`/proc/${server.pid}/task/${tid}/stat`, 'utf8')
          return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])]
        } catch {
          return [] // the thread ended meanwhile
        }
      })
    const client = clientFor(server)
    const queryId = randomUUID()
    const running = client
      .query({
        query: 'SELECT sum(cityHash64(number)) FROM numbers(100000000000)',
        query_id: queryId,
        clickhouse_settings: { max_threads: 1, os_thread_priority: '19', max_execution_time: 30 },
      })
      .catch((err: Error) => err)
    await waitFor(() => nices().includes(19), { timeoutMs: 10_000, what: 'a server thread at nice 19' })
    // As Tally ends a query it stops waiting for (clickhouse/query-end.ts).
    await client.command({
      query: `KILL QUERY WHERE query_id = {id:String} SYNC`,
      query_params: { id: queryId },
    })
    expect(String(await running)).toMatch(/QUERY_WAS_CANCELLED|cancelled/i)
    await waitFor(() => !nices().includes(19), {
      timeoutMs: 10_000,
      what: () => `every server thread back from nice 19; nice values ${nices().join(',')}`,
    })
    await client.close()
  }, 60_000)

  it('as a user other than root, shuts it in with a user namespace', async () => {
    const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path))
    if (process.getuid?.() !== 0 || !setpriv) {
      console.warn('!!! not root or no setpriv: the non-root containment check is skipped !!!')
      return
    }
    const dir = mkdtempSync(join(tmpdir(), 'tally-ch-nobody-'))
    dirs.push(dir)
    chownSync(dir, 65534, 65534)
    const script = `import { startClickHouseServer } from ${JSON.stringify(SERVER_MODULE)}
      const log = { info() {}, warn() {}, error() {} }
      const server = await startClickHouseServer({ dataDir: ${JSON.stringify(join(dir, 'engine'))}, secretsDir: ${JSON.stringify(join(dir, 'secrets'))}, containment: 'required', log })
      console.log(JSON.stringify({ pid: server.pid, containment: server.containment }))
      process.stdin.once('data', async () => { await server.stop(); process.exit(0) })`
    const child = spawn(
      setpriv,
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        '--input-type=module',
        '-e',
        script,
      ],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    )
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()))
      child.once('exit', (code) => reject(new Error(`the unprivileged start exited with ${code}`)))
    })
    const started = JSON.parse(line) as { pid: number; containment: string }
    expect(started.containment).toMatch(/^contained: a user namespace/)
    expect(statusOf(started.pid, 'CapEff')).toBe('0000000000000000')
    expect(statusOf(started.pid, 'NoNewPrivs')).toBe('1')
    child.stdin.write('stop\n')
    await new Promise((resolve) => child.once('exit', resolve))
    expect(isAlive(started.pid)).toBe(false)
  }, 60_000)

  it('runs uncontained when told to, and says so', async () => {
    const server = await start({ dataDir: tempDir(), containment: 'off' })
    expect(server.containment).toBe('uncontained: TALLY_CLICKHOUSE_CONTAINMENT=off')
    expect(readlinkSync(`/proc/${server.pid}/root`)).toBe('/')
  })
})
