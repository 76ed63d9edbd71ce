import { randomBytes } from 'node:crypto'
import { connect, createServer, type Socket } from 'node:net'
import { afterAll, expect, it } from 'vitest'
import { clickhouseEnv, engines } from '../support/harness.ts'
import { cleanUpProcesses, freshDataDir, spawnTally, waitForOutput } from '../support/processes.ts'
import { createScratchDatabase } from '../support/scratch-database.ts'
import { waitFor } from '../support/wait.ts'

afterAll(cleanUpProcesses)

/**
 * A TCP proxy to `host:port`. cut() drops every connection, then accepts new ones and never
 * answers them: the server as seen from a client when its host is gone from the network.
 */
async function cuttableProxy(host: string, port: number) {
  const sockets = new Set<Socket>()
  let forwarding = true
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = createServer((client) => {
    track(client)
    if (!forwarding) return
    const upstream = connect(port, host)
    track(upstream)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address !== 'object') throw new Error('the proxy has no address')
  const dropAll = () => {
    for (const s of sockets) s.destroy()
  }
  return {
    port: address.port,
    cut() {
      forwarding = false
      dropAll()
    },
    close() {
      forwarding = false
      server.close()
      dropAll()
    },
  }
}

const STEP_TIMEOUT_MS = 2_000

it('SIGTERM with Postgres unreachable: steps that wait on it are abandoned at their deadline, named, and the process exits', async () => {
  const base = new URL(engines().postgresUrl)
  const db = await createScratchDatabase(engines().postgresUrl, 'shutdown')
  const proxy = await cuttableProxy(base.hostname, Number(base.port || 5432))
  try {
    const url = new URL(db.url)
    url.hostname = '127.0.0.1'
    url.port = String(proxy.port)
    const p = spawnTally('services/standalone/main.ts', {
      ...clickhouseEnv(),
      DATABASE_URL: url.toString(),
      TALLY_DATA_DIR: freshDataDir(),
      TALLY_SHUTDOWN_STEP_TIMEOUT: `${STEP_TIMEOUT_MS}ms`,
      // Logs each request as it arrives: the test knows when its request is in flight.
      TALLY_LOG_LEVEL: 'debug',
    })
    const tallyUrl = await waitForOutput(p, (out) => /"url":"([^"]+)","msg":"process_ready"/.exec(out)?.[1], {
      what: 'process_ready',
      timeoutMs: 60_000,
    })

    proxy.cut()
    // An unknown key is looked up in Postgres, which no longer answers: the request stays in
    // flight, and closing the API waits for it.
    const held = fetch(`${tallyUrl}/v1/api-keys`, {
      headers: { authorization: `Bearer tly_${randomBytes(16).toString('hex')}`, 'x-request-id': 'held' },
    }).catch(() => undefined)
    await waitForOutput(p, (out) => /"reqId":"held".*"msg":"incoming request"/.test(out), {
      what: 'the request in flight',
      timeoutMs: 10_000,
    })

    const signalled = Date.now()
    p.child.kill('SIGTERM')
    await waitFor(() => p.child.exitCode !== null, {
      what: () => `the process to exit; the output:\n${p.output()}`,
      // Far below Postgres's 30 s connect timeout, which the steps waited for before.
      timeoutMs: 15_000,
      intervalMs: 50,
    })
    const elapsed = Date.now() - signalled
    const out = p.output()
    expect(out).toMatch(/"step":"api","ms":\d+,"msg":"shutdown_step_abandoned"/)
    const finished = /"abandoned":\[([^\]]*)\],"msg":"shutdown_finished"/.exec(out)
    expect(finished?.[1]).toContain('"api"')
    const abandoned = finished?.[1]?.split(',').length ?? 0
    // Each abandoned step took its deadline; the others finish at once.
    expect(elapsed).toBeLessThan(abandoned * STEP_TIMEOUT_MS + 3_000)
    await held
  } finally {
    proxy.close()
    await db.drop()
  }
}, 120_000)
