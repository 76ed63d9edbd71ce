import { createServer, type Socket } from 'node:net'

/**
 * A loopback TCP server that accepts connections and never answers, as a server that hangs, or an
 * address behind a firewall that swallows packets, looks to a client that got through the connect.
 */
export async function silentServer() {
  const sockets = new Set<Socket>()
  let accepted = 0
  const server = createServer((socket) => {
    accepted++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    port,
    /** Connections accepted so far: the client did get this far. */
    accepted: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
