import { connect, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy on loopback in front of a real server, which a test can stall: paused, it stops
 * reading from both sides (the server sees nothing more, the client no answer), as a server
 * that hangs would; resumed, everything held goes through. It can also reset connections: each
 * of the next `resetNext(n)` connections is reset (RST) when its first request arrives, as a
 * server restarting under its clients does.
 */
export async function tcpProxy(target: { host: string; port: number }) {
  let paused = false
  let toReset = 0
  let reset = 0
  const sockets = new Set<Socket>()
  const track = (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    if (paused) s.pause()
  }
  const server = createServer((client) => {
    if (toReset > 0) {
      toReset--
      client.once('data', () => {
        reset++
        client.resetAndDestroy()
      })
      client.on('error', () => {})
      return
    }
    const upstream = connect(target.port, target.host)
    track(client)
    track(upstream)
    client.on('data', (d) => upstream.write(d))
    upstream.on('data', (d) => client.write(d))
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    port,
    pause() {
      paused = true
      for (const s of sockets) s.pause()
    },
    /** Resets each of the next `n` connections at its first request. */
    resetNext(n: number) {
      toReset = n
    },
    /** Closes every open connection (both sides), as a server that restarts does. */
    dropConnections() {
      for (const s of sockets) s.destroy()
    },
    /** How many connections were reset so far. */
    resets: () => reset,
    resume() {
      paused = false
      for (const s of sockets) s.resume()
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
