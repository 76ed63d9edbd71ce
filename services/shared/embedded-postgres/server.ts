/**
 * One embedded Postgres server per data directory, shared by every Tally process on the machine.
 *
 * The first process to take `server.lock` (an flock, held for as long as it owns the server) is
 * the owner: it starts Postgres, records it in `server.json`, and stops it when it closes. Any
 * other process waits for that record and attaches: it connects and, when it closes, leaves the
 * server running for its owner.
 *
 * Postgres is the owner's child, but it survives an owner killed with SIGKILL. The lock does not
 * (the kernel drops it), so the next process to start takes the lock and finds the server still
 * running: it adopts it (the attached processes keep working) once it has proved it is this
 * directory's server with Tally's password on loopback, and stops it otherwise to start afresh.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { type FileLock, lockHolder, tryLockFile } from '../file-lock.ts'
import type { Logger } from '../logger.ts'
import { freePort } from '../net.ts'
import { delay, endListeners, isAlive, watchProcess } from '../os.ts'
import { initialiseCluster, launchPostgres } from './launch.ts'
import { probe, runningPostmaster, stopPostmaster } from './postmaster.ts'

export interface EmbeddedPostgresOptions {
  /** Tally passes `$TALLY_DATA_DIR/postgres`; the cluster itself is its `data/`. */
  dir: string
  log: Logger
  /** How long opening may take in all: waiting for another process's server, initdb, start. Default 60 s. */
  deadlineMs?: number
  /** How long the owner's stop() lets Postgres shut down fast before an immediate shutdown. Default 15 s. */
  stopGraceMs?: number
}

export interface EmbeddedPostgres {
  /** The connection URL, with its password: never log it. */
  url: string
  /** For logs: the data directory, and whether this process owns the server. */
  describe: string
  /** The postmaster's pid. */
  pid: number
  /** `started` or `adopted`: this process owns the server and stop() stops it. `attached`: it does not. */
  role: 'started' | 'adopted' | 'attached'
  /**
   * Called once if the server ends other than through this handle's stop(): it died, was killed,
   * or (attached) its owner stopped it. Found within a second; keeps no process alive.
   */
  onExit(listener: () => void): void
  stop(): Promise<void>
}

/** Written by the owner once its server accepts connections; read by processes that attach. */
interface ServerState {
  ownerPid: number
  pid: number
  port: number
  startedAt: string
}

const FILES = { lock: 'server.lock', state: 'server.json', password: 'password', data: 'data' } as const
const POLL_MS = 100
const PROBE_MS = 2_000

export async function openEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { dir } = options
  const deadlineMs = options.deadlineMs ?? 60_000
  const deadline = Date.now() + deadlineMs
  mkdirSync(dir, { recursive: true, mode: 0o755 })
  const lockFile = join(dir, FILES.lock)
  let waitingFor = ''
  for (;;) {
    const lock = tryLockFile(lockFile)
    if (lock) {
      try {
        return await own(lock, options, deadline)
      } catch (err) {
        lock.release()
        throw err
      }
    }
    // Another process owns the server, or is starting it: attach once it says where it is.
    const owner = lockHolder(lockFile)
    const state = readState(dir)
    if (!state || state.ownerPid !== owner || !owner || !isAlive(state.pid)) {
      waitingFor = `process ${owner ?? '(unknown)'}, which holds ${lockFile}, to record its server in ${FILES.state}`
    } else {
      const answer = await probe(state.port, readPassword(dir), dataDirOf(dir), PROBE_MS)
      if (answer === true) return attach(state, options)
      waitingFor = `the server of process ${owner} (pid ${state.pid}, port ${state.port}) to accept connections (last answer: ${answer})`
    }
    if (Date.now() >= deadline)
      throw new Error(`embedded Postgres in ${dir}: gave up after ${deadlineMs} ms waiting for ${waitingFor}`)
    await delay(POLL_MS)
  }
}

interface Owned {
  pid: number
  port: number
  role: 'started' | 'adopted'
  password: string
  /** For a server this process started: how it ended. An adopted one is watched by its pid. */
  exited?: Promise<object>
  lock: FileLock
}

async function own(
  lock: FileLock,
  options: EmbeddedPostgresOptions,
  deadline: number,
): Promise<EmbeddedPostgres> {
  const { dir, log } = options
  const dataDir = dataDirOf(dir)
  const firstStart = !existsSync(join(dataDir, 'PG_VERSION'))
  let password: string
  if (firstStart) {
    password = randomBytes(18).toString('base64url')
    writeFileSync(join(dir, FILES.password), password, { mode: 0o600 })
    await initialiseCluster({ dataDir, password, deadline, log })
  } else password = readPassword(dir)

  let server: Owned | undefined
  const orphan = firstStart ? undefined : runningPostmaster(dataDir)
  if (orphan) {
    const answer = await probe(orphan.port, password, dataDir, PROBE_MS)
    if (answer === true) {
      // Its owner died without stopping it (SIGKILL): keep it, and the processes attached to it.
      server = { ...orphan, role: 'adopted', password, lock }
      log.warn(
        { postgresPid: orphan.pid, port: orphan.port, dataDir },
        'embedded_postgres_adopted: its owner ended without stopping it',
      )
    } else {
      log.warn({ postgresPid: orphan.pid, dataDir, reason: answer }, 'embedded_postgres_orphan_stopping')
      await stopPostmaster(orphan.pid, options.stopGraceMs ?? 15_000)
    }
  }
  if (!server) {
    // The port of the last start when it is free, so that processes still attached to that
    // server reconnect to its successor by themselves.
    const previous = readState(dir)?.port
    const port = previous && (await isFree(previous)) ? previous : await freePort()
    const launched = await launchPostgres({ dataDir, port, password, deadline, log })
    server = { ...launched, port, role: 'started', password, lock }
  }
  const { pid, port } = server
  writeState(dir, { ownerPid: process.pid, pid, port, startedAt: new Date().toISOString() })
  return owned(server, options)
}

function owned(server: Owned, { dir, log, stopGraceMs = 15_000 }: EmbeddedPostgresOptions): EmbeddedPostgres {
  const { pid, port, role, lock } = server
  let stopping = false
  // A process that exits without its shutdown (process.exit on a fatal error) still stops its
  // server; only SIGKILL leaves one behind, for the next process to adopt.
  const onProcessExit = () => {
    if (!stopping && isAlive(pid)) process.kill(pid, 'SIGINT')
  }
  process.on('exit', onProcessExit)
  let unwatch = () => {}
  const ended =
    server.exited ??
    new Promise<object>((resolve) => {
      unwatch = watchProcess(pid, () => resolve({}))
    })
  const listeners = endListeners<void>()
  void ended.then((exit) => {
    if (stopping) return
    log.error(
      { ...exit, postgresPid: pid, port, dir },
      'embedded_postgres_exited: it stopped or died while in use',
    )
    listeners.end()
  })
  return {
    ...addresses(port, server.password, dir, `${role}, pid ${pid}`),
    pid,
    role,
    onExit: listeners.add,
    async stop() {
      if (stopping) return
      stopping = true
      unwatch()
      process.off('exit', onProcessExit)
      const started = Date.now()
      try {
        const how = await stopPostmaster(pid, stopGraceMs)
        if (how === 'fast')
          log.info({ postgresPid: pid, ms: Date.now() - started }, 'embedded_postgres_stopped')
        else log.warn({ postgresPid: pid, ms: Date.now() - started }, 'embedded_postgres_stopped_immediately')
      } finally {
        // Only now: a process that takes the lock must not find this server still shutting down.
        lock.release()
      }
    },
  }
}

function attach(state: ServerState, { dir, log }: EmbeddedPostgresOptions): EmbeddedPostgres {
  const { pid, port } = state
  let gone = false
  const listeners = endListeners<void>()
  const unwatch = watchProcess(pid, () => {
    gone = true
    log.error(
      { postgresPid: pid, port, ownerPid: state.ownerPid, dir },
      'embedded_postgres_gone: its owner stopped it or died; queries fail until a process starts it again',
    )
    listeners.end()
  })
  log.info({ postgresPid: pid, port, ownerPid: state.ownerPid, dir }, 'embedded_postgres_attached')
  return {
    ...addresses(port, readPassword(dir), dir, `attached to pid ${pid} of process ${state.ownerPid}`),
    pid,
    role: 'attached',
    onExit: listeners.add,
    async stop() {
      unwatch()
      if (gone) log.info({ postgresPid: pid, dir }, 'embedded_postgres_detached')
      else log.info({ postgresPid: pid, dir }, 'embedded_postgres_detached: left running for its owner')
    },
  }
}

function addresses(port: number, password: string, dir: string, how: string) {
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    describe: `embedded (${dataDirOf(dir)}; ${how})`,
  }
}

const dataDirOf = (dir: string) => join(dir, FILES.data)

function readPassword(dir: string): string {
  return readFileSync(join(dir, FILES.password), 'utf8').trim()
}

function readState(dir: string): ServerState | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, FILES.state), 'utf8')) as ServerState
  } catch {
    return undefined // none yet, or being replaced right now
  }
}

function writeState(dir: string, state: ServerState): void {
  const path = join(dir, FILES.state)
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state)}\n`, { mode: 0o644 })
  renameSync(`${path}.tmp`, path)
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}
