/**
 * The process that hosts the ClickHouse server: `node child.ts`, spawned by spawn.ts with a pipe on
 * fd 3 that brings its options (the first line) and the request to stop. It takes the data
 * directory's lock, runs clickhouse-local from libchdb.so with `SYSTEM START LISTEN HTTP` and a
 * keep-alive query, reports the port, and stops ClickHouse when the parent asks, usually on SIGTERM, or
 * when the pipe closes because the parent is gone (even after kill -9): the server never outlives
 * its owner.
 */
import { request } from 'node:http'
import { Socket } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { tryLockFile } from '../file-lock.ts'
import { exitZeroOnReturn, hardExit, loadClickHouse, runClickHouse } from './native.ts'
import { listeningPorts } from './proc.ts'
import {
  type ChildMessage,
  type ChildOptions,
  CONTAINED_DATA_DIR,
  EXIT,
  FILES,
  KEEPALIVE_QUERY_ID,
  type ParentMessage,
} from './protocol.ts'
import { enterSandbox } from './sandbox.ts'

const POLL_MS = 20

const pipe = new Socket({ fd: 3, readable: true, writable: true })
let options: ChildOptions
let port: number | undefined
let stopping = false
let clickHouseStarted = false

function send(message: ChildMessage): void {
  if (pipe.writable) pipe.write(`${JSON.stringify(message)}\n`)
}

/** Before ClickHouse runs a normal exit is fine; after, only _exit (see native.ts). */
function exitWith(code: number): never {
  if (clickHouseStarted) hardExit(code)
  process.exit(code)
}

function fail(err: unknown): never {
  process.stderr.write(`clickhouse-server child: ${(err as Error)?.stack ?? String(err)}\n`)
  exitWith(EXIT.childError)
}
process.on('uncaughtException', fail)
process.on('unhandledRejection', fail)

/** Ends the keep-alive query: clickhouse-local then shuts down (flushing tables) and returns. */
async function stop(reason: string): Promise<void> {
  if (stopping) return
  stopping = true
  send({ type: 'stopping', reason })
  if (!options) exitWith(EXIT.stopped)
  // Still starting: nothing was written yet that ending the process could lose.
  if (!clickHouseStarted || port === undefined) exitWith(EXIT.stopped)
  // Not unref'd: this timer is what ends the process if ClickHouse does not.
  setTimeout(() => {
    process.stderr.write(
      `clickhouse-server child: ClickHouse did not stop within ${options.stopGraceMs} ms\n`,
    )
    hardExit(EXIT.stopTimeout)
  }, options.stopGraceMs)
  exitZeroOnReturn()
  try {
    await killKeepAlive(port)
  } catch (err) {
    process.stderr.write(
      `clickhouse-server child: could not stop ClickHouse cleanly: ${(err as Error).message}\n`,
    )
    hardExit(EXIT.stopTimeout)
  }
}

/**
 * `KILL QUERY` of the keep-alive query, on a connection that closes after it (agent: false): an
 * idle keep-alive connection would make ClickHouse wait for it before it shuts down.
 */
async function killKeepAlive(httpPort: number): Promise<void> {
  await runSql(httpPort, `KILL QUERY WHERE query_id = '${KEEPALIVE_QUERY_ID}' ASYNC`)
}

/** One statement as Tally's user, on a connection of its own; its answer's text. */
function runSql(httpPort: number, sql: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: httpPort,
        path: `/?query=${encodeURIComponent(sql)}`,
        method: 'POST',
        agent: false,
        auth: `${options.username}:${options.password}`,
        timeout: options.stopGraceMs,
      },
      (res) => {
        let body = ''
        res.on('data', (chunk) => {
          body += chunk
        })
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(body)
            : reject(new Error(`HTTP ${res.statusCode}: ${body.trim()}`)),
        )
      },
    )
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.stopGraceMs} ms`)))
    req.on('error', reject)
    req.end()
  })
}

// The parent's end of the pipe closes when the parent exits, however it exits.
pipe.on('close', () => void stop('parent gone'))
pipe.on('error', () => void stop('parent gone'))
createInterface({ input: pipe }).on('line', (line) => {
  const message = JSON.parse(line) as ParentMessage
  if (message.type === 'start' && !options) {
    options = message.options
    lockThenStart()
  } else if (message.type === 'stop') void stop('asked by parent')
})

function lockThenStart(): void {
  // Held until this process ends, however it ends: the kernel then releases it.
  if (tryLockFile(join(options.dataDir, FILES.lock))) {
    start()
    return
  }
  stopping = true // the pipe's close below is this process's own doing
  send({ type: 'locked' })
  // Let the message reach the parent before the pipe closes.
  pipe.end(() => process.exit(EXIT.locked))
}

function start(): void {
  // The paths ClickHouse is given are those it sees, inside its root when contained.
  const engineDir = options.sandbox ? CONTAINED_DATA_DIR : options.dataDir
  const argv = [
    'clickhouse',
    `--path=${join(engineDir, FILES.data)}`,
    `--config-file=${join(engineDir, FILES.config)}`,
    `--logger.log=${join(engineDir, FILES.log)}`,
    // With a log level set, clickhouse-local prints its own errors (port taken, bad config) to
    // stderr, where the parent collects them, instead of into a result nobody reads.
    '--log-level=warning',
    // Its own session's statements may be this long; its user's profile allows one byte to anyone
    // else signing in as that user over HTTP (config.ts).
    '--max_query_size=1000000',
    `--http_port=${options.httpPort}`,
    ...(options.tcpPort === undefined ? [] : [`--tcp_port=${options.tcpPort}`]),
    '--listen_host=127.0.0.1',
    `--query_id=${KEEPALIVE_QUERY_ID}`,
    // Sleeps in one thread, one hour per row, until KILL QUERY: no CPU, no memory. A cluster's
    // node also listens on the native protocol, which Distributed tables speak between nodes.
    `--query=${options.tcpPort === undefined ? '' : 'SYSTEM START LISTEN TCP; '}SYSTEM START LISTEN HTTP; ` +
      'SELECT sleepEachRow(3600) FROM system.numbers ' +
      'SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0 FORMAT Null',
  ]
  const entry = loadClickHouse(options.libchdbPath)
  if (options.sandbox) enterSandbox(options.sandbox)
  clickHouseStarted = true
  runClickHouse(entry, argv)
  const deadline = Date.now() + options.listenDeadlineMs
  const poll = () => {
    const ports = listeningPorts()
    const found =
      options.httpPort === 0
        ? ports.find((p) => p !== options.tcpPort)
        : ports.find((p) => p === options.httpPort)
    if (found !== undefined) return void listening(found, deadline)
    if (Date.now() > deadline) {
      process.stderr.write(
        `clickhouse-server child: ClickHouse listened on no port after ${options.listenDeadlineMs} ms\n`,
      )
      hardExit(EXIT.noListener)
    }
    setTimeout(poll, POLL_MS)
  }
  poll()
}

/**
 * Reports the port once the keep-alive query runs: ClickHouse sets up its own signal handling as
 * that query starts, and stopping means killing that query, so neither may race a stop request.
 */
async function listening(found: number, deadline: number): Promise<void> {
  const running = `SELECT count() FROM system.processes WHERE query_id = '${KEEPALIVE_QUERY_ID}'`
  while ((await runSql(found, running).catch(() => '0')).trim() !== '1') {
    if (Date.now() > deadline) {
      process.stderr.write('clickhouse-server child: the keep-alive query did not start in time\n')
      hardExit(EXIT.noListener)
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  port = found
  send({ type: 'listening', port: found })
  // A SIGTERM or SIGINT from outside (a service manager stopping the whole process group) stops
  // ClickHouse as the owner's stop does, and the child exits 0. Registered only now, after
  // ClickHouse set up its own signal handling, so that this handler is the one the signal reaches.
  // The owner never relies on it: it stops the server through the pipe.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal))
}
