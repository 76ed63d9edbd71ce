import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runningPostmaster, stopPostmaster } from '../../services/shared/embedded-postgres/postmaster.ts'
import { freePort } from '../../services/shared/net.ts'
import { isAlive } from '../../services/shared/os.ts'
import { callApi } from '../support/api.ts'
import { engines } from '../support/harness.ts'
import {
  cleanUpProcesses,
  freshDataDir,
  spawnTally,
  stopTally,
  type TallyProcess,
  waitForOutput,
} from '../support/processes.ts'
import { waitFor } from '../support/wait.ts'

/** Opens embedded Postgres in its TALLY_DATA_DIR, queries on SIGUSR2, closes on SIGTERM. */
const POSTGRES_PROCESS = new URL('../support/postgres-process.ts', import.meta.url).pathname
const dataDirs: string[] = []

afterAll(async () => {
  // A test that failed half-way can leave a server whose owner the cleanup below kills with
  // SIGKILL: stop those first, so that no Postgres outlives the run.
  for (const dir of dataDirs) {
    const server = runningPostmaster(join(dir, 'postgres', 'data'))
    if (server) await stopPostmaster(server.pid, 5_000)
  }
  await cleanUpProcesses()
})

function dataDir(): string {
  const dir = freshDataDir('tally-pg-shared-')
  dataDirs.push(dir)
  return dir
}

interface Opened {
  p: TallyProcess
  role: 'started' | 'adopted' | 'attached'
  postgresPid: number
}

const events = (p: TallyProcess) =>
  p
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{"event"'))
    .map((line) => JSON.parse(line) as { event: string; n?: number; describe?: string; server?: string })

async function open(dir: string): Promise<Opened> {
  const p = spawnTally(POSTGRES_PROCESS, { TALLY_DATA_DIR: dir })
  const { describe } = await waitForOutput(p, () => events(p).find((e) => e.event === 'opened'), {
    what: 'the process to open embedded Postgres',
    timeoutMs: 90_000,
  })
  const m = /; (started|adopted|attached)(?:,| to) pid (\d+)/.exec(describe ?? '')
  if (!m) throw new Error(`unexpected describe: ${describe}`)
  return { p, role: m[1] as Opened['role'], postgresPid: Number(m[2]) }
}

/** Asks the process to run one query; resolves with its answer: the server it came from, or the failure. */
async function query(p: TallyProcess): Promise<{ event: string; server?: string; error?: string }> {
  const n = events(p).filter((e) => e.event === 'queried' || e.event === 'query_failed').length + 1
  p.child.kill('SIGUSR2')
  return waitForOutput(p, () => events(p).find((e) => e.n === n), {
    what: `the answer to query ${n}`,
    timeoutMs: 15_000,
  })
}

/** The server (its start time and port) that answered the process's query. */
async function servedBy(p: TallyProcess): Promise<string> {
  const answer = await query(p)
  expect(answer).toMatchObject({ event: 'queried' })
  return answer.server as string
}

async function close(p: TallyProcess): Promise<void> {
  expect(await stopTally(p)).toBe(0)
  expect(events(p).at(-1)?.event).toBe('closed')
}

const postmasterPidFile = (dir: string) => join(dir, 'postgres', 'data', 'postmaster.pid')

describe('embedded Postgres shared by several processes', () => {
  it('the first process starts it, the next attaches; both query the one server; closing the attached one leaves it to its owner', async () => {
    const dir = dataDir()
    const owner = await open(dir)
    expect(owner.role).toBe('started')
    const other = await open(dir)
    expect(other).toMatchObject({ role: 'attached', postgresPid: owner.postgresPid })

    const server = await servedBy(owner.p)
    expect(await servedBy(other.p)).toBe(server)

    await close(other.p)
    expect(isAlive(owner.postgresPid)).toBe(true)
    expect(await servedBy(owner.p)).toBe(server)

    await close(owner.p)
    expect(isAlive(owner.postgresPid)).toBe(false)
    expect(existsSync(postmasterPidFile(dir))).toBe(false)
  }, 120_000)

  it('three processes starting at once on a fresh directory end with one server, one owner', async () => {
    const dir = dataDir()
    const all = await Promise.all([open(dir), open(dir), open(dir)])
    expect(all.map((o) => o.role).sort()).toEqual(['attached', 'attached', 'started'])
    expect(new Set(all.map((o) => o.postgresPid)).size).toBe(1)
    expect(new Set(await Promise.all(all.map((o) => servedBy(o.p)))).size).toBe(1)
    // The owner last, as docs/running.md says.
    for (const o of all.filter((o) => o.role === 'attached')) await close(o.p)
    for (const o of all.filter((o) => o.role === 'started')) await close(o.p)
    expect(isAlive(all[0]?.postgresPid as number)).toBe(false)
  }, 150_000)

  it('an owner killed with SIGKILL leaves its server to the attached processes; the next process adopts it, and its stop fails their queries at once', async () => {
    const dir = dataDir()
    const owner = await open(dir)
    const attached = await open(dir)
    const server = await servedBy(attached.p)

    owner.p.child.kill('SIGKILL')
    await owner.p.exited
    expect(await servedBy(attached.p)).toBe(server)

    const began = Date.now()
    const heir = await open(dir)
    expect(Date.now() - began).toBeLessThan(30_000)
    expect(heir).toMatchObject({ role: 'adopted', postgresPid: owner.postgresPid })
    expect(heir.p.output()).toContain('embedded_postgres_adopted')
    expect(await servedBy(heir.p)).toBe(server)

    // The owner's stop ends the server: the attached process's queries fail, they do not hang,
    // and it says so in its log.
    await close(heir.p)
    const failed = Date.now()
    expect(await query(attached.p)).toMatchObject({
      event: 'query_failed',
      error: expect.stringMatching(/ECONNREFUSED/),
    })
    expect(Date.now() - failed).toBeLessThan(5_000)
    await waitForOutput(attached.p, (output) => output.includes('embedded_postgres_gone'), {
      what: 'the attached process to log that its server is gone',
      timeoutMs: 5_000,
    })

    // A new owner starts it again on the same port: the attached process's pool reconnects.
    const next = await open(dir)
    expect(next.role).toBe('started')
    const port = (served: string) => served.split(' on port ')[1]
    expect(port(await servedBy(attached.p))).toBe(port(server))
    await close(attached.p)
    await close(next.p)
  }, 150_000)

  it('stops a server left running that it cannot prove is its own, and starts a fresh one', async () => {
    const dir = dataDir()
    await close((await open(dir)).p) // creates the cluster
    // Started by hand on this cluster, listening beyond 127.0.0.1: not one Tally would adopt.
    const stray = await startStrayPostgres(join(dir, 'postgres', 'data'))
    const owner = await open(dir)
    expect(owner.role).toBe('started')
    expect(owner.postgresPid).not.toBe(stray)
    expect(owner.p.output()).toMatch(/"reason":"it listens on localhost".*embedded_postgres_orphan_stopping/)
    expect(isAlive(stray)).toBe(false)
    await servedBy(owner.p)
    await close(owner.p)
  }, 120_000)
})

describe.skipIf(!engines().kafkaBrokers)(
  'the distributed entries on one data directory, without DATABASE_URL',
  () => {
    const entryEnv = (dir: string) => {
      const topic = `tally.test.pgshared.${Date.now()}`
      return {
        TALLY_DATA_DIR: dir,
        KAFKA_BROKERS: engines().kafkaBrokers ?? '',
        TALLY_REQUEST_TOPIC: topic,
        TALLY_DLQ_TOPIC: `${topic}.dlq`,
        TALLY_CONSUMER_GROUP_PREFIX: `${topic}.`,
      }
    }
    const ready = (p: TallyProcess) =>
      waitForOutput(p, (output) => output.includes('"msg":"process_ready"'), {
        what: 'process_ready',
        timeoutMs: 90_000,
      })
    const urlOf = (api: TallyProcess) =>
      /"url":"(http:[^"]+)","msg":"process_ready"/.exec(api.output())?.[1] as string

    it('as docs/running.md runs them: the API first owns both engines, ingest and the dispatcher attach, the owner stops last', async () => {
      // Not made yet: the engines the API opens at once create it, and Postgres (run as the
      // `postgres` user under root) must still be able to enter it.
      const dir = join(dataDir(), 'tally')
      dataDirs.push(dir)
      const env = entryEnv(dir)
      const api = spawnTally('services/api/main.ts', env)
      await ready(api)
      expect(api.output()).toContain('embedded_postgres_started')
      const others = ['services/ingest/main.ts', 'services/dispatcher/main.ts'].map((entry) =>
        spawnTally(entry, env),
      )
      await Promise.all(others.map(ready))
      expect(others[1]?.output()).toContain('embedded_postgres_attached')
      expect((await callApi(urlOf(api), 'GET', '/readyz')).status).toBe(200)
      expect(await Promise.all(others.map(stopTally))).toEqual([0, 0])
      expect(await stopTally(api)).toBe(0)
      for (const p of [api, ...others]) expect(p.output()).not.toMatch(/"level":(50|60)/)
      expect(existsSync(postmasterPidFile(dir))).toBe(false)
    }, 180_000)

    it('the dispatcher owns the embedded Postgres, the API attaches; once the owner stops, the API exits 1 naming it', async () => {
      const dir = dataDir()
      const env = entryEnv(dir)
      const dispatcher = spawnTally('services/dispatcher/main.ts', env)
      await ready(dispatcher)
      expect(dispatcher.output()).toContain('embedded_postgres_started')
      const api = spawnTally('services/api/main.ts', env)
      await ready(api)
      expect(api.output()).toContain('embedded_postgres_attached')
      expect((await callApi(urlOf(api), 'GET', '/readyz')).status).toBe(200)

      expect(await stopTally(dispatcher)).toBe(0)
      expect(existsSync(postmasterPidFile(dir))).toBe(false)
      // As with an embedded ClickHouse gone: a supervisor restarts it, and it starts Postgres again.
      expect(await api.exited).toBe(1)
      expect(api.output()).toContain('embedded_postgres_gone')
      expect(api.output()).toMatch(/"level":60,.*"engine":"postgres".*"msg":"embedded_engine_lost: /)
    }, 180_000)
  },
)

/** Runs the cluster's own postgres binary as Tally would not (listening on "localhost"); resolves with its pid. */
async function startStrayPostgres(dataDir: string): Promise<number> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform
  const { postgres } = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as {
    postgres: string
  }
  const ids =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
        }
      : {}
  const port = await freePort()
  const args = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=localhost']
  const child = spawn(postgres, [...args, '-c', 'unix_socket_directories='], {
    detached: true,
    stdio: 'ignore',
    ...ids,
  })
  child.unref()
  // Line 8 of postmaster.pid is the server's state.
  const state = () => {
    try {
      return readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[7]?.trim()
    } catch {
      return undefined // not written yet
    }
  }
  await waitFor(() => state() === 'ready', {
    what: `the stray postgres (pid ${child.pid}) to be ready`,
    timeoutMs: 20_000,
  })
  return child.pid as number
}
