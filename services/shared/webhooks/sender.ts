import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { rootCertificates } from 'node:tls'
import { Agent, buildConnector, request } from 'undici'
import { BlockedDestinationError, guardedLookup, isBlockedAddress } from './address-guard.ts'

/** Spec 6.2: a receiver answers 2xx within 5 seconds, or the attempt failed. */
const ATTEMPT_TIMEOUT_MS = 5_000
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
