/**
 * Runs ClickHouse out of process, as a local server speaking ClickHouse's HTTP interface on
 * 127.0.0.1, from the libchdb.so the chdb package installs: no ClickHouse binary, no compiler.
 * One server per data directory; a process that finds one already serving its directory attaches
 * to it instead of starting another.
 */
import { chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { lockIsFree } from '../file-lock.ts'
import { delay, endListeners, watchProcess } from '../os.ts'
import { type Credentials, loadCredentials, writeServerConfig } from './config.ts'
import { planContainment } from './containment.ts'
import type { ClickHouseServer, ClickHouseServerOptions, ServerExit } from './handle.ts'
import { CONTAINED_DATA_DIR, FILES, type ServerState } from './protocol.ts'
import { spawnServer } from './spawn.ts'
import { addresses, findRunning } from './state.ts'

export interface Platform {
  platform: string
  arch: string
  /** The C library's glibc version, undefined when it is not glibc (musl, or not Linux). */
  glibc: string | undefined
}

function currentPlatform(): Platform {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
    ?.header
  return { platform: process.platform, arch: process.arch, glibc: header?.glibcVersionRuntime }
}

/**
 * Why the embedded ClickHouse server cannot run on `p`, naming what to set instead; undefined where
 * it can. The child relies on glibc (on_exit, libc.so.6) and /proc, and chdb ships libchdb.so for
 * Linux x64 with glibc only.
 */
export function embeddedClickHouseUnsupported(p: Platform): string | undefined {
  if (p.platform === 'linux' && p.arch === 'x64' && p.glibc) return undefined
  const here = `${p.platform} ${p.arch}${p.platform === 'linux' && !p.glibc ? ' without glibc (musl?)' : ''}`
  return (
    `The embedded ClickHouse server runs on Linux x64 with glibc only, not on ${here}. ` +
    'Set CLICKHOUSE_URL to the HTTP endpoint of a ClickHouse server you run ' +
    '(e.g. http://tally:<password>@127.0.0.1:8123; see docs/configuration.md).'
  )
}

const POLL_MS = 50

export async function startClickHouseServer(options: ClickHouseServerOptions): Promise<ClickHouseServer> {
  const { dataDir } = options
  const deadlineMs = options.deadlineMs ?? 30_000
  const deadline = Date.now() + deadlineMs
  const unsupported = embeddedClickHouseUnsupported(currentPlatform())
  if (unsupported) throw new Error(unsupported)
  // Only the server's own directory is private: a parent made here (TALLY_DATA_DIR) keeps the
  // usual mode, which embedded Postgres, run as the postgres user under root, must be able to enter.
  mkdirSync(dataDir, { recursive: true })
  chmodSync(dataDir, 0o700)
  const credentials = loadCredentials(options.secretsDir, dataDir)
  const lockFile = join(dataDir, FILES.lock)
  for (;;) {
    const running = await findRunning(dataDir)
    if (running) return attach(running, credentials, options)
    // Only while nobody holds the lock: the files written next are the config of a server starting
    // or running there, which ClickHouse reloads when they change.
    if (lockIsFree(lockFile)) {
      mkdirSync(join(dataDir, FILES.root), { recursive: true, mode: 0o755 })
      const containment = planContainment(options.containment ?? 'auto', dataDir)
      const engineDir = containment.sandbox ? CONTAINED_DATA_DIR : dataDir
      writeServerConfig(
        dataDir,
        credentials,
        options.analystDatabase ?? 'default',
        engineDir,
        options.cluster,
      )
      // Made by this process: the contained server's user must own them.
      containment.handOver?.()
      const owned = await spawnServer(options, credentials, containment, deadline)
      if (owned !== 'locked') return owned
    }
    // Another process holds the lock: its server is starting, or stopping because its owner has
    // gone. Attach once it answers for a live owner; start one of our own once the lock is free.
    for (;;) {
      const other = await findRunning(dataDir)
      if (other) return attach(other, credentials, options)
      if (lockIsFree(lockFile)) break
      if (Date.now() >= deadline)
        throw new Error(
          `ClickHouse server in ${dataDir}: another process holds ${FILES.lock} but its server did not answer ` +
            `GET /ping, or its owner has gone and it is still shutting down, within ${deadlineMs} ms`,
        )
      await delay(POLL_MS)
    }
  }
}

function attach(
  state: ServerState,
  credentials: Credentials,
  { dataDir, log }: ClickHouseServerOptions,
): ClickHouseServer {
  const listeners = endListeners<ServerExit>()
  // Not our child: the only sign of its end is its pid going away.
  const unwatch = watchProcess(state.pid, () => {
    log.error({ pid: state.pid, dataDir }, 'clickhouse_server_gone')
    listeners.end({ code: null, signal: null, stderr: '' })
  })
  const server = addresses(state.httpPort, credentials)
  log.info({ endpoint: server.endpoint, pid: state.pid, dataDir }, 'clickhouse_server_attached')
  return {
    ...server,
    pid: state.pid,
    attached: true,
    containment: 'as its owner started it',
    onExit: listeners.add,
    async stop() {
      unwatch()
      log.info({ pid: state.pid, dataDir }, 'clickhouse_server_detached: left running for its owner')
    },
  }
}
