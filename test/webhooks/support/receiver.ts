import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Certificates {
  dir: string
  /** The test CA, for TALLY_WEBHOOK_CA_FILE or NODE_EXTRA_CA_CERTS. */
  caFile: string
  key: string
  cert: string
  remove(): void
}

/** A throwaway CA and a server certificate for localhost and 127.0.0.1, made with openssl. */
export function makeCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'tally-webhook-tls-'))
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  run(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Tally Test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  )
  run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost')
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  )
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  )
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

interface Received {
  path: string
  headers: IncomingHttpHeaders
  /** The raw bytes, exactly as they arrived. */
  body: Buffer
  at: number
}

interface Reply {
  status?: number
  headers?: Record<string, string>
  body?: string
  /** Answer after this long (a receiver that is too slow). */
  delayMs?: number
  /** Answer only once this settles (something the test does while the request is on the wire). */
  after?: Promise<unknown>
  /** Send the status and headers at once, then the body one byte every this many ms, for ever. */
  trickleMs?: number
}

/** Decides the answer to a request; `nth` counts the requests to that path, from 1. */
type Responder = (received: Received, nth: number) => Reply

export interface Receiver {
  url: string
  /** https://localhost:<port>, the same server reached through a name. */
  localhostUrl: string
  received: Received[]
  on(path: string, responder: Responder): void
  to(path: string): Received[]
  close(): Promise<void>
}

/** A real HTTPS server on 127.0.0.1 that records every request and answers as told (200 by default). */
export async function startReceiver(certs: Certificates): Promise<Receiver> {
  const received: Received[] = []
  const responders = new Map<string, Responder>()
  const counts = new Map<string, number>()
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = req.url ?? '/'
      const entry = { path, headers: req.headers, body: Buffer.concat(chunks), at: Date.now() }
      received.push(entry)
      const nth = (counts.get(path) ?? 0) + 1
      counts.set(path, nth)
      const reply = responders.get(path)?.(entry, nth) ?? {}
      const send = () => {
        if (res.destroyed) return
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers })
        if (!reply.trickleMs) return res.end(reply.body ?? 'ok')
        res.flushHeaders()
        const drip = setInterval(() => {
          if (res.destroyed) clearInterval(drip)
          else res.write('.')
        }, reply.trickleMs)
        drip.unref()
        res.on('close', () => clearInterval(drip))
      }
      if (reply.after) void reply.after.finally(send)
      else if (reply.delayMs) setTimeout(send, reply.delayMs).unref()
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `https://127.0.0.1:${port}`,
    localhostUrl: `https://localhost:${port}`,
    received,
    on: (path, responder) => responders.set(path, responder),
    to: (path) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
