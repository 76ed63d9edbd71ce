import { randomInt } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** Where ports are picked from when the kernel's ephemeral range leaves room below it. */
const LOWEST_PORT = 10_000

/**
 * The kernel's range of ephemeral ports (those it gives outgoing connections and `listen(0)`),
 * on Linux; undefined elsewhere.
 */
function ephemeralRange(): [number, number] | undefined {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number)
    return Number.isInteger(low) && Number.isInteger(high) ? [low as number, high as number] : undefined
  } catch {
    return undefined
  }
}

/** Listens on 127.0.0.1:`port` (0: any) and closes again; the port, or undefined when it is taken. */
function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err),
    )
    server.listen(port, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(address && typeof address === 'object' ? address.port : undefined))
    })
  })
}

/** Ports this process handed out: never twice. */
const handedOut = new Set<number>()

/**
 * A free TCP port on 127.0.0.1 for a server to be started on soon (often by another process).
 * Picked below the kernel's ephemeral range when there is room: a port from `listen(0)` is free
 * again once checked, and the kernel may give it to any outgoing connection before the server
 * binds it (seen: EADDRINUSE in a child started a moment later). Ports below the range are never
 * given out by the kernel; each is checked free before it is handed out.
 */
export async function freePort(): Promise<number> {
  const range = ephemeralRange()
  const highest = (range?.[0] ?? 0) - 1
  if (highest - LOWEST_PORT >= 1_000) {
    for (let tries = 0; tries < 100; tries += 1) {
      const port = LOWEST_PORT + randomInt(highest - LOWEST_PORT + 1)
      if (handedOut.has(port)) continue
      if ((await tryListen(port)) === port) {
        if (handedOut.size >= 20_000) handedOut.clear()
        handedOut.add(port)
        return port
      }
    }
  }
  const port = await tryListen(0)
  if (port === undefined) throw new Error('no port assigned')
  return port
}

/** Node's socket error codes of a server refused, unreachable, or gone mid-request. */
export const SOCKET_ERROR_CODES: readonly string[] = [
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]
