/** The state file of a data directory and the checks that tell a live server from a stale record. */
import { readFileSync, rmSync } from 'node:fs'
import { get } from 'node:http'
import { join } from 'node:path'
import { isAlive } from '../os.ts'
import type { Credentials } from './config.ts'
import { startTicks } from './proc.ts'
import { FILES, type ServerState } from './protocol.ts'

/**
 * The server recorded in dataDir, if it and its owner live and it answers /ping. A stale file is
 * ignored, and so is a server whose owner has died: it is shutting down, and a process that
 * attached to it would lose it a moment later.
 */
export async function findRunning(dataDir: string): Promise<ServerState | undefined> {
  let state: ServerState
  try {
    state = JSON.parse(readFileSync(join(dataDir, FILES.state), 'utf8')) as ServerState
  } catch {
    return undefined // none, or being replaced right now
  }
  if (!isAlive(state.pid)) return undefined
  if (state.ownerPid !== undefined && !ownerLives(state.ownerPid, state.ownerStart)) return undefined
  return (await ping(state.httpPort)) ? state : undefined
}

/** The owner is alive and is the process that wrote the state, not a later one given its pid. */
function ownerLives(pid: number, start: number | undefined): boolean {
  return isAlive(pid) && (start === undefined || startTicks(pid) === start)
}

/** Removes the state file once its server is gone, unless a newer server has replaced it. */
export function forgetState(dataDir: string, pid: number | undefined): void {
  const path = join(dataDir, FILES.state)
  try {
    if ((JSON.parse(readFileSync(path, 'utf8')) as ServerState).pid === pid) rmSync(path)
  } catch {
    // none, or unreadable: findRunning ignores it either way
  }
}

export function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/ping', agent: false, timeout: 1_000 }, (res) => {
      let body = ''
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve(res.statusCode === 200 && body === 'Ok.\n'))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(false))
  })
}

/** The promise's value, or undefined once `ms` have passed; leaves no timer behind. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Where a server answers: the endpoint for logs, and URLs with credentials for clients. */
export function addresses(port: number, { username, password, analyst, analystEngine, sql }: Credentials) {
  const endpoint = `http://127.0.0.1:${port}`
  const url = (user: string, secret: string) =>
    `http://${encodeURIComponent(user)}:${encodeURIComponent(secret)}@127.0.0.1:${port}`
  return {
    endpoint,
    url: url(username, password),
    analystEngineUrl: url(analystEngine.username, analystEngine.password),
    analyst,
    sqlUrl: url(sql.username, sql.password),
    username,
    password,
  }
}
