import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { readFileSync } from 'node:fs'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { rootCertificates } from 'node:tls'
import { Agent, buildConnector, request } from 'undici'

/** Spec 6.2: a receiver answers 2xx within 5 seconds, or the attempt failed. */
export const ATTEMPT_TIMEOUT_MS = 5_000
const RESPONSE_BODY_KEPT = 2_048
const RESPONSE_BODY_READ = 65_536

export interface SendResult {
  ok: boolean
  status: number | null
  durationMs: number
  /** The first 2 KB of the response body, as text. */
  responseBody: string | null
  error: string | null
  /** From a Retry-After header, when the receiver sent one. */
  retryAfterMs: number | null
}

export interface SenderOptions {
  allowPrivateNetworks: boolean
  /** Connections per destination origin: one slow receiver cannot hold more than this. */
  connectionsPerDestination: number
  /** A PEM file of extra CAs to trust besides the system's (NODE_EXTRA_CA_CERTS works too). */
  caFile?: string | undefined
}

export interface Sender {
  send(destination: string, body: Buffer, headers: Record<string, string>): Promise<SendResult>
  close(): Promise<void>
}

export class BlockedDestinationError extends Error {
  readonly code = 'EBLOCKEDDESTINATION'
}

/** The attempt's one deadline (connect, headers and the whole body) passed. */
class AttemptTimeoutError extends Error {
  readonly code = 'EATTEMPTTIMEOUT'
  override readonly name = 'TimeoutError'
}

/**
 * Outbound HTTPS for deliveries: no redirects (undici follows none unless asked), one 5 s deadline
 * for the whole attempt (connect, headers and body), and unless private networks are allowed, no connection to loopback,
 * private, link-local or metadata addresses: names are checked after DNS resolution (in the
 * socket's lookup, so the address checked is the address connected) and the connected peer is
 * checked again.
 */
export function createSender(options: SenderOptions): Sender {
  const guard = !options.allowPrivateNetworks
  const ca = options.caFile ? [...rootCertificates, readFileSync(options.caFile, 'utf8')] : undefined
  const base = buildConnector({
    timeout: ATTEMPT_TIMEOUT_MS,
    ...(guard ? { lookup: guardedLookup } : {}),
    ...(ca ? { ca } : {}),
  })
  const agent = new Agent({
    connections: options.connectionsPerDestination,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    headersTimeout: ATTEMPT_TIMEOUT_MS,
    bodyTimeout: ATTEMPT_TIMEOUT_MS,
    connect: (opts, callback) =>
      base(opts, (err, socket) => {
        if (err || !socket) return callback(err ?? new Error('no socket'), null)
        const peer = socket.remoteAddress
        if (guard && (!peer || isBlockedAddress(peer))) {
          socket.destroy()
          return callback(new BlockedDestinationError(`connected address ${peer} is not public`), null)
        }
        callback(null, socket)
      }),
  })

  return {
    async send(destination, body, headers) {
      const started = performance.now()
      const result = (partial: Omit<SendResult, 'durationMs'>): SendResult => ({
        ...partial,
        durationMs: Math.round(performance.now() - started),
      })
      const failed = (error: string) =>
        result({ ok: false, status: null, responseBody: null, error, retryAfterMs: null })
      let url: URL
      try {
        url = new URL(destination)
      } catch {
        return failed('destination is not a URL')
      }
      if (url.protocol !== 'https:') return failed('destination is not https')
      const host = url.hostname.replace(/^\[|\]$/g, '')
      if (guard && isIP(host) && isBlockedAddress(host))
        return failed(`destination address ${host} is not public`)
      // One deadline for the whole attempt, connect, headers and body alike: the agent's timeouts
      // only bound idle gaps, and a receiver trickling its answer would hold the attempt for ever.
      const deadline = new AbortController()
      const timer = setTimeout(() => deadline.abort(new AttemptTimeoutError()), ATTEMPT_TIMEOUT_MS)
      try {
        const response = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json', 'user-agent': 'Tally-Webhooks/1', ...headers },
          body,
          signal: deadline.signal,
        })
        const abortBody = () => response.body.destroy(deadline.signal.reason as Error)
        deadline.signal.addEventListener('abort', abortBody, { once: true })
        try {
          const responseBody = await readPrefix(response.body)
          return result({
            ok: response.statusCode >= 200 && response.statusCode < 300,
            status: response.statusCode,
            responseBody,
            error:
              response.statusCode >= 200 && response.statusCode < 300
                ? null
                : `receiver answered ${response.statusCode}`,
            retryAfterMs: parseRetryAfter(response.headers['retry-after']),
          })
        } finally {
          deadline.signal.removeEventListener('abort', abortBody)
        }
      } catch (err) {
        return failed(describeError(deadline.signal.aborted ? deadline.signal.reason : err))
      } finally {
        clearTimeout(timer)
      }
    },
    close: () => agent.close(),
  }
}

/** The first 2 KB of the answer; past 64 KB the rest is not worth the connection and is dropped. */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = []
  let kept = 0
  let read = 0
  for await (const chunk of body) {
    if (kept < RESPONSE_BODY_KEPT) {
      chunks.push(chunk)
      kept += chunk.length
    }
    read += chunk.length
    if (read > RESPONSE_BODY_READ) {
      body.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_KEPT).toString('utf8')
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return null
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

function describeError(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown }
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT')
    return `no answer within ${ATTEMPT_TIMEOUT_MS} ms`
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return `connect timed out after ${ATTEMPT_TIMEOUT_MS} ms`
  if (err instanceof BlockedDestinationError || e.code === 'EBLOCKEDDESTINATION')
    return e.message ?? 'blocked'
  const cause = e.cause as { code?: string; message?: string } | undefined
  const detail = cause?.message ?? e.message ?? 'unknown error'
  return (e.code ?? cause?.code) ? `${e.code ?? cause?.code}: ${detail}` : detail
}

// Where a webhook must never reach unless TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS is set: the IANA
// IPv4 and IPv6 special-purpose address registries, and every range that embeds an IPv4 address
// (NAT64, 6to4, Teredo, IPv4-compatible, IPv4-translated) since it may embed a private one.
const BLOCKED = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (and some clouds' metadata, e.g. 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // direct delegation AS112 service
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // NAT64 well-known prefix: reaches IPv4 space
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32, embeds IPv4) among them
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing SIDs
  ['fc00::', 7], // unique local (AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6')

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged by the IPv4 address it maps to.
  const mapped = family === 6 ? mappedIPv4(address) : null
  if (mapped) return BLOCKED.check(mapped, 'ipv4')
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

function mappedIPv4(address: string): string | null {
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted) return dotted[1] as string
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (!hex) return null
  const hi = Number.parseInt(hex[1] as string, 16)
  const lo = Number.parseInt(hex[2] as string, 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/** dns.lookup that fails when any address of the name is not public. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 4)
    const blocked = addresses.find((a) => isBlockedAddress(a.address))
    if (blocked || addresses.length === 0) {
      const error = new BlockedDestinationError(
        `${hostname} resolves to ${blocked?.address ?? 'nothing'}, which is not a public address`,
      )
      return callback(error as NodeJS.ErrnoException, '', 4)
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
    const first = addresses[0] as LookupAddress
    callback(null, first.address, first.family)
  })
}
