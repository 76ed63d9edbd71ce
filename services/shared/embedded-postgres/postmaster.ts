/** Facts about a running Postgres server (a postmaster) and stopping one we did not spawn. */
import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import { delay, isAlive } from '../os.ts'

/**
 * The server recorded in the data directory's postmaster.pid (lines 1 and 4), if it still runs.
 * A file left by a server that died is ignored (Postgres replaces it when it starts), and so is a
 * pid that another program has since been given.
 */
export function runningPostmaster(dataDir: string): { pid: number; port: number } | undefined {
  let lines: string[]
  try {
    lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')
  } catch {
    return undefined
  }
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || !isAlive(pid)) return undefined
  return isPostgres(pid) ? { pid, port } : undefined
}

function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres'
  } catch {
    return process.platform !== 'linux'
  }
}

/**
 * Whether the server on `port` is the one serving `dataDir` with Tally's password and its loopback
 * listener: the proof needed before attaching to a server or adopting one. Resolves with the
 * reason when it is not (for the message of a wait that gives up).
 */
export async function probe(
  port: number,
  password: string,
  dataDir: string,
  timeoutMs: number,
): Promise<true | string> {
  const sql = postgres({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    database: 'postgres',
    max: 1,
    connect_timeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
    onnotice: () => {},
  })
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs)
  })
  const answer = sql<{ data_directory: string; listen_addresses: string }[]>`
    select current_setting('data_directory') as data_directory,
           current_setting('listen_addresses') as listen_addresses`.then(
    ([row]) => {
      if (!row || !samePath(row.data_directory, dataDir))
        return `it serves ${row?.data_directory}, not ${dataDir}`
      if (row.listen_addresses !== '127.0.0.1') return `it listens on ${row.listen_addresses}`
      return true as const
    },
    (err: Error) => err.message,
  )
  try {
    return await Promise.race([answer, timeout])
  } finally {
    clearTimeout(timer)
    await sql.end({ timeout: 0 })
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b)
  } catch {
    return false
  }
}

/**
 * Stops a postmaster: SIGINT (a fast shutdown: clients disconnected, a checkpoint written), then
 * after `graceMs` SIGQUIT (an immediate shutdown: no checkpoint, the next start replays the WAL,
 * nothing committed is lost). Throws naming the pid if it is still there after that.
 */
export async function stopPostmaster(pid: number, graceMs: number): Promise<'fast' | 'immediate'> {
  const IMMEDIATE_MS = 5_000
  signal(pid, 'SIGINT')
  if (await exited(pid, graceMs)) return 'fast'
  signal(pid, 'SIGQUIT')
  if (await exited(pid, IMMEDIATE_MS)) return 'immediate'
  throw new Error(
    `embedded Postgres (pid ${pid}) did not stop within ${graceMs} ms of SIGINT and ` +
      `${IMMEDIATE_MS} ms of SIGQUIT; stop it and retry`,
  )
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err
  }
}

async function exited(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false
    await delay(50)
  }
  return true
}
