import { connect, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy on loopback in front of a real server, which a test can stall: paused, it stops
 * reading from both sides (the server sees nothing more, the client no answer), as a server
 * that hangs would; resumed, everything held goes through.
 */
export async function tcpProxy(target: { host: string; port: number }) {
  let paused = false
  const sockets = new Set<Socket>()
  const track = (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    if (paused) s.pause()
  }
  const server = createServer((client) => {
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
