/** Starting a server of our own: the child process, its readiness, its end. */
import { spawn } from 'node:child_process'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { constants } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { libchdbPath } from 'chdb/libchdb'
import { delay, endListeners } from '../os.ts'
import type { Credentials } from './config.ts'
import type { Containment } from './containment.ts'
import type { ClickHouseServer, ClickHouseServerOptions, ServerExit } from './handle.ts'
import { startTicks } from './proc.ts'
import { type ChildMessage, EXIT, FILES, type ParentMessage, type ServerState } from './protocol.ts'
import { addresses, forgetState, ping, within } from './state.ts'

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url))
const POLL_MS = 50
const STDERR_LINES = 40
/** clickhouse-local's exit status when it gives up waiting for client connections at shutdown. */
const FORCED_SHUTDOWN = 1
/** The child's own stop deadline is later than the parent's: the parent's SIGKILL comes first. */
const CHILD_GRACE_EXTRA_MS = 1_000
/** How long the launcher may take to notice its killed child and exit before it is killed too. */
const LAUNCHER_GRACE_MS = 2_000

type Started = ClickHouseServer | 'locked'

/** Spawns the child and waits until it serves /ping, says the directory is locked, or fails. */
export function spawnServer(
  options: ClickHouseServerOptions,
  credentials: Credentials,
  containment: Containment,
  deadline: number,
): Promise<Started> {
  const { dataDir, log } = options
  const deadlineMs = options.deadlineMs ?? 30_000
  const stopDeadlineMs = options.stopDeadlineMs ?? 15_000
  const startedAt = Date.now()
  const node = [process.execPath, '--disable-warning=ExperimentalWarning', CHILD]
  const [command = '', ...args] = containment.launcher
    ? [containment.launcher.command, ...containment.launcher.args, '--', ...node]
    : node
  const child = spawn(command, args, {
    cwd: dataDir,
    // Nothing of Tally's environment (keys, database URLs, cloud credentials) reaches the engine.
    env: {},
    // detached: a Ctrl-C in the terminal reaches the parent only, which then stops the server.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  const pipe = child.stdio[3] as Socket
  // A child that dies resets its pipes; its exit event is what reports that.
  for (const stream of [pipe, child.stdout, child.stderr]) stream?.on('error', () => {})
  const stderr: string[] = []
  /** The process that runs ClickHouse: the child, or the launcher's child when contained. */
  let serverPid = child.pid as number
  let stopRequested = false
  /** Why the child said it stops, when it did: asked by this process, or a signal sent to it. */
  let stopping: string | undefined
  let exited: ServerExit | undefined
  const exitListeners = endListeners<ServerExit>()
  const exitedPromise = new Promise<ServerExit>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { ...serverExit(code, signal, containment), stderr: stderr.join('\n') }
      resolve(exited)
    }),
  )
  collectLines(child.stderr, (line) => {
    stderr.push(line)
    if (stderr.length > STDERR_LINES) stderr.shift()
    // Once stopping, ClickHouse reports its keep-alive query as cancelled: expected. And it
    // announces where its log goes.
    if (stopping || /^Logging \w+ to /.test(line)) log.info({ line }, 'clickhouse_server_stderr')
    else log.warn({ line }, 'clickhouse_server_stderr')
  })
  collectLines(child.stdout, (line) => log.info({ line }, 'clickhouse_server_stdout'))
  /**
   * SIGKILL to the server process. Contained, that is the launcher's child: the launcher reaps it,
   * then exits, so its exit means the server is gone; it is killed itself only if it has not
   * exited a while later. A child not yet known dies with the launcher (its parent-death signal).
   */
  const killServer = () => {
    if (serverPid === child.pid) return void child.kill('SIGKILL')
    try {
      process.kill(serverPid, 'SIGKILL')
    } catch {
      // already gone
    }
    setTimeout(() => child.kill('SIGKILL'), LAUNCHER_GRACE_MS).unref()
  }
  const send = (message: ParentMessage) => {
    if (pipe.writable) pipe.write(`${JSON.stringify(message)}\n`)
  }
  send({
    type: 'start',
    options: {
      libchdbPath: libchdbPath(),
      dataDir,
      httpPort: options.httpPort ?? 0,
      ...(options.cluster ? { tcpPort: options.cluster.tcpPort } : {}),
      username: credentials.username,
      password: credentials.password,
      stopGraceMs: stopDeadlineMs + CHILD_GRACE_EXTRA_MS,
      listenDeadlineMs: Math.max(0, deadline - Date.now()),
      ...(containment.sandbox
        ? { sandbox: { ...containment.sandbox, root: join(dataDir, FILES.root), dataDir } }
        : {}),
    },
  })

  const failure = (what: string) => {
    const tail = stderr.length
      ? `; its last stderr lines:\n${stderr.join('\n')}`
      : '; it wrote nothing to stderr'
    return new Error(`ClickHouse server in ${dataDir}: ${what}${tail}`)
  }

  return new Promise<Started>((resolve, reject) => {
    let settled = false
    const settle = (outcome: Started | Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (outcome instanceof Error) reject(outcome)
      else resolve(outcome)
    }
    let waitingFor = 'the child to report the port ClickHouse listens on'
    const timer = setTimeout(
      () => {
        killServer()
        settle(failure(`gave up after ${deadlineMs} ms waiting for ${waitingFor}; killed pid ${child.pid}`))
      },
      Math.max(0, deadline - Date.now()),
    )
    void exitedPromise.then(({ code, signal }) =>
      settle(
        code === EXIT.locked
          ? 'locked'
          : failure(`the child exited (code ${code}, signal ${signal}) while waiting for ${waitingFor}`),
      ),
    )
    collectLines(pipe, (line) => {
      let message: ChildMessage
      try {
        message = JSON.parse(line) as ChildMessage
      } catch {
        killServer()
        return settle(failure(`the child wrote something other than JSON on its pipe: ${line}`))
      }
      if (message.type === 'locked') settle('locked')
      if (message.type === 'stopping') {
        stopping = message.reason
        if (!stopRequested) log.warn({ reason: stopping, pid: serverPid }, 'clickhouse_server_stopping')
      }
      if (message.type !== 'listening') return
      if (containment.launcher) {
        try {
          serverPid = launchedChild(child.pid as number)
        } catch (err) {
          killServer()
          return settle(failure((err as Error).message))
        }
      }
      const server = addresses(message.port, credentials)
      waitingFor = `GET ${server.endpoint}/ping to answer "Ok."`
      const poll = async () => {
        while (!settled && exited === undefined) {
          if (await ping(message.port)) {
            writeState(dataDir, {
              pid: serverPid,
              ownerPid: process.pid,
              ownerStart: startTicks(process.pid),
              httpPort: message.port,
              startedAt: new Date().toISOString(),
            })
            return settle(owned(server))
          }
          await delay(POLL_MS)
        }
      }
      void poll()
    })
  })

  function owned(server: ReturnType<typeof addresses>): ClickHouseServer {
    // An idle server must not keep its owner alive; when the owner exits, the pipe closes and
    // the child stops ClickHouse.
    child.unref()
    pipe.unref()
    ;(child.stdout as Socket).unref()
    ;(child.stderr as Socket).unref()
    void exitedPromise.then((exit) => {
      forgetState(dataDir, serverPid)
      if (stopRequested) return
      // Stopped cleanly by a SIGTERM or SIGINT sent to it; else it died, failed, or someone killed
      // its keep-alive query.
      const how = exit.code === EXIT.stopped && stopping ? `stopped (${stopping})` : 'died'
      log.error({ ...exit, pid: serverPid, dataDir }, `clickhouse_server_exited: ${how}`)
      exitListeners.end(exit)
    })
    const pid = serverPid
    log.info(
      {
        endpoint: server.endpoint,
        pid,
        dataDir,
        ms: Date.now() - startedAt,
        containment: containment.describe,
      },
      'clickhouse_server_started',
    )
    return {
      ...server,
      pid,
      attached: false,
      containment: containment.describe,
      onExit: exitListeners.add,
      stop: () => stopChild(),
    }
  }

  async function stopChild(): Promise<void> {
    if (exited) return
    stopRequested = true
    const started = Date.now()
    send({ type: 'stop' })
    const done = await within(exitedPromise, stopDeadlineMs)
    if (done) {
      const facts = { ...done, pid: serverPid, ms: Date.now() - started }
      if (done.code === EXIT.stopped) log.info(facts, 'clickhouse_server_stopped')
      else if (done.code === FORCED_SHUTDOWN)
        log.warn(
          facts,
          'clickhouse_server_stopped_forcefully: ClickHouse waited 5 s for open client connections, then skipped ' +
            'the rest of its shutdown (written data is safe); close clients before stop()',
        )
      else log.warn(facts, 'clickhouse_server_stopped_uncleanly')
      return
    }
    killServer()
    const killed = await exitedPromise
    log.warn(
      { ...killed, pid: serverPid, waitedMs: stopDeadlineMs },
      'clickhouse_server_killed: no clean exit in time; queries in flight and background merges abandoned',
    )
  }
}

/**
 * How the server ended. The launcher (`unshare --fork`) ends with its child's status, and a child
 * killed by a signal as 128 + the signal's number: reported as that signal, as an uncontained child's is.
 */
function serverExit(
  code: number | null,
  signal: NodeJS.Signals | null,
  containment: Containment,
): Pick<ServerExit, 'code' | 'signal'> {
  if (!containment.launcher || code === null || code <= 128) return { code, signal }
  const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0]
  return name ? { code: null, signal: name as NodeJS.Signals } : { code, signal }
}

/** The one child of the launcher (`unshare --fork`): the process that runs ClickHouse. */
function launchedChild(launcherPid: number): number {
  const children = readFileSync(`/proc/${launcherPid}/task/${launcherPid}/children`, 'utf8').trim()
  const pid = Number(children.split(' ')[0])
  if (!Number.isInteger(pid) || pid <= 0)
    throw new Error(`launcher ${launcherPid} has no child: "${children}"`)
  return pid
}

/** Atomically: another process reading it never sees half. */
function writeState(dataDir: string, state: ServerState): void {
  const path = join(dataDir, FILES.state)
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state)}\n`, { mode: 0o600 })
  renameSync(`${path}.tmp`, path)
}

function collectLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  let buffered = ''
  stream?.setEncoding('utf8')
  stream?.on('data', (chunk: string) => {
    buffered += chunk
    const lines = buffered.split('\n')
    buffered = lines.pop() ?? ''
    for (const line of lines) if (line.trim()) onLine(line)
  })
}
