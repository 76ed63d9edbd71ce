/**
 * The analyst door: where data teams reach ClickHouse. It speaks ClickHouse's HTTP interface (the
 * query in the URL or the body, settings and `param_*` in the URL, FORMAT, compression, the
 * `X-ClickHouse-*` headers), so @clickhouse/client, the JDBC driver, Grafana or curl work with it
 * unchanged. Unlike the engine's own port it checks each statement first (../sql/guard.ts: the
 * engine's parse, the function allowlist), and runs it as the engine's read-only analyst user,
 * whose password only Tally knows: the password data teams hold works here and nowhere else.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createBrotliDecompress, createGunzip, createInflate, createZstdDecompress } from 'node:zlib'
import type { Logger } from '../../shared/logger.ts'
import { type AuthFailureLimit, retryAfterSeconds } from '../http/auth-failures.ts'
import { clientGone } from '../http/client-gone.ts'
import { checkAnswerText, createSqlGuard, SqlRefused } from '../sql/interface.ts'

export interface AnalystDoorOptions {
  host: string
  port: number
  /** The engine's read-only analyst user, with its password. */
  engineUrl: string
  /** What data teams sign in with. */
  username: string
  password: string
  /** Statements running at once; beyond, "too many simultaneous queries". */
  maxQueries: number
  /** How long one statement may take through the door, answer included. */
  deadlineMs: number
  authFailures: AuthFailureLimit
  log: Logger
}

export interface AnalystDoor {
  /** http://host:port, without credentials. */
  url: string
  close(): Promise<void>
}

/** A statement is text: 1 MiB is far more than any hand-written or generated query. */
const MAX_STATEMENT_BYTES = 1024 * 1024

/** URL parameters that are not settings: credentials (replaced), the statement, its parameters. */
const NOT_FORWARDED = new Set(['query', 'user', 'password'])
/** Request headers a ClickHouse client may send that the engine should see. */
const FORWARDED_HEADERS = [
  'accept-encoding',
  'x-clickhouse-format',
  'x-clickhouse-database',
  'x-clickhouse-query-id',
  'x-clickhouse-quota',
  'traceparent',
  'tracestate',
]
/** Response headers that belong to one connection, not to the answer. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection'])

const DECOMPRESS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
  zstd: createZstdDecompress,
}

/** An answer the door gives in ClickHouse's own words, so that drivers report it as they would the server's. */
class DoorAnswer extends Error {
  readonly status: number
  readonly code: number
  readonly codeName: string
  readonly headers: Record<string, string>
  constructor(
    status: number,
    code: number,
    codeName: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = status
    this.code = code
    this.codeName = codeName
    this.headers = headers
  }
}

/** The engine's own answer to a check (a syntax error): relayed as it is. */
class EngineAnswer extends Error {
  readonly status: number
  readonly headers: IncomingMessage['headers']
  readonly body: Buffer
  constructor(status: number, headers: IncomingMessage['headers'], body: Buffer) {
    super(`HTTP ${status}`)
    this.status = status
    this.headers = headers
    this.body = body
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest()

export async function startAnalystDoor(options: AnalystDoorOptions): Promise<AnalystDoor> {
  const engine = new URL(options.engineUrl)
  const engineAuth = `Basic ${Buffer.from(`${decodeURIComponent(engine.username)}:${decodeURIComponent(engine.password)}`).toString('base64')}`
  const expected = digest(`${options.username}\n${options.password}`)
  const log = options.log.child({ component: 'analyst-door' })
  let running = 0

  const server: Server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        // Cut off mid-answer: the client left, or the deadline passed. The engine stops with it.
        log.info({ reason: (err as Error).message }, 'analyst_answer_cut')
        res.destroy()
        return
      }
      if (err instanceof DoorAnswer) return answer(res, err)
      log.error({ err }, 'analyst_door_failed')
      answer(res, new DoorAnswer(500, 1001, 'STD_EXCEPTION', "Tally's analyst door failed; see Tally's log"))
    })
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 60_000

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://door')
    if (url.pathname === '/ping' && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' }).end('Ok.\n')
      return
    }
    if (url.pathname !== '/')
      throw new DoorAnswer(
        404,
        1001,
        'BAD_REQUEST_PARAMETER',
        `There is no handler ${url.pathname} at Tally's analyst door`,
      )
    if (req.method !== 'GET' && req.method !== 'POST')
      throw new DoorAnswer(405, 1001, 'BAD_REQUEST_PARAMETER', `${req.method} is not allowed: GET or POST`, {
        allow: 'GET, POST',
      })
    const ip = req.socket.remoteAddress ?? ''
    const blocked = options.authFailures.blockedFor(ip)
    if (blocked !== undefined) throw tooManyFailures(blocked)
    if (!authenticated(req, url)) {
      const over = await options.authFailures.countFailure(ip)
      if (over !== undefined) throw tooManyFailures(over)
      throw new DoorAnswer(
        401,
        516,
        'AUTHENTICATION_FAILED',
        `${credentialsOf(req, url).username}: Authentication failed: password is incorrect, or there is no user with such name`,
        { 'www-authenticate': 'Basic realm="Tally analyst door", charset="UTF-8"' },
      )
    }
    // The statement is read before a slot is taken: a slow upload holds a connection, not a slot.
    const statement = await statementOf(req, url)
    if (running >= options.maxQueries)
      throw new DoorAnswer(
        503,
        202,
        'TOO_MANY_SIMULTANEOUS_QUERIES',
        `Too many simultaneous queries at Tally's analyst door: ${options.maxQueries} run at once; retry when one has finished`,
      )
    running++
    try {
      await runStatement(req, res, url, statement)
    } finally {
      running--
    }
  }

  function authenticated(req: IncomingMessage, url: URL): boolean {
    const { username, password } = credentialsOf(req, url)
    return timingSafeEqual(digest(`${username}\n${password}`), expected)
  }

  function tooManyFailures(ms: number): DoorAnswer {
    const seconds = retryAfterSeconds(ms)
    return new DoorAnswer(
      429,
      516,
      'AUTHENTICATION_FAILED',
      `More than ${options.authFailures.perMinute} failed authentications in a minute from this address; retry in ${seconds} s`,
      { 'retry-after': String(seconds) },
    )
  }

  async function runStatement(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    statement: string,
  ): Promise<void> {
    const started = Date.now()
    const deadline = AbortSignal.any([AbortSignal.timeout(options.deadlineMs), clientGone(req, res)])
    // ClickHouse takes the first of repeated parameters, the check would read another: refused.
    const names = [...url.searchParams.keys()]
    const repeated = names.find((name, i) => names.indexOf(name) !== i)
    if (repeated !== undefined)
      throw new DoorAnswer(
        400,
        1001,
        'BAD_REQUEST_PARAMETER',
        `The URL parameter ${repeated} is given more than once`,
      )
    const forwarded = new URLSearchParams()
    const params: Record<string, string> = {}
    for (const [name, value] of url.searchParams) {
      if (NOT_FORWARDED.has(name)) continue
      forwarded.append(name, value)
      if (name.startsWith('param_')) params[name.slice('param_'.length)] = value
    }
    const guard = createSqlGuard(async (text, checkParams, whose) => {
      const search = new URLSearchParams({ default_format: 'TabSeparatedRaw' })
      // The client's own param_* are in ClickHouse's escaped form already; the guard's are plain.
      for (const [name, value] of Object.entries(checkParams))
        search.set(`param_${name}`, whose === 'caller' ? String(value) : escaped(String(value)))
      const { status, headers, body } = await toEngine(search, {}, text, deadline)
      if (status !== 200) throw new EngineAnswer(status, headers, Buffer.concat(await body.toArray()))
      return checkAnswerText(body)
    })
    try {
      await guard.check(statement, 'analyst', params)
    } catch (err) {
      if (err instanceof SqlRefused) {
        log.info({ reason: err.message }, 'analyst_statement_refused')
        throw new DoorAnswer(403, 497, 'ACCESS_DENIED', `Tally's analyst door: ${err.message}`)
      }
      if (err instanceof EngineAnswer) return relay(res, err.status, err.headers, err.body)
      throw err
    }
    const headers: Record<string, string> = {}
    for (const name of FORWARDED_HEADERS) {
      const value = req.headers[name]
      if (typeof value === 'string') headers[name] = value
    }
    const upstream = await toEngine(forwarded, headers, statement, deadline)
    res.writeHead(upstream.status, responseHeaders(upstream.headers))
    try {
      await pipeline(upstream.body, res, { signal: deadline })
    } finally {
      log.info({ status: upstream.status, ms: Date.now() - started }, 'analyst_statement')
    }
  }

  /** One request to the engine as its analyst user; resolves once its answer's headers arrive. */
  function toEngine(
    search: URLSearchParams,
    headers: Record<string, string>,
    statement: string,
    signal: AbortSignal,
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Readable }> {
    return new Promise((resolve, reject) => {
      const upstream = request(
        {
          host: engine.hostname,
          port: engine.port,
          path: `/?${search}`,
          method: 'POST',
          headers: { ...headers, authorization: engineAuth, 'content-type': 'text/plain; charset=UTF-8' },
          signal,
        },
        (answer) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: answer }),
      )
      upstream.on('error', reject)
      upstream.end(statement)
    })
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address()
  const port = address && typeof address === 'object' ? address.port : options.port
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** A query parameter's value in ClickHouse's escaped text form: backslash, tab and line breaks escaped. */
const escaped = (value: string) =>
  value.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] ?? c)

/** The user and password a ClickHouse client sends, in any of the three ways ClickHouse takes them. */
function credentialsOf(req: IncomingMessage, url: URL): { username: string; password: string } {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')
  if (basic?.[1]) {
    const text = Buffer.from(basic[1], 'base64').toString('utf8')
    const colon = text.indexOf(':')
    return colon < 0
      ? { username: text, password: '' }
      : { username: text.slice(0, colon), password: text.slice(colon + 1) }
  }
  const header = (name: string) => {
    const value = req.headers[name]
    return typeof value === 'string' ? value : undefined
  }
  const username = header('x-clickhouse-user') ?? url.searchParams.get('user') ?? 'default'
  const password = header('x-clickhouse-key') ?? url.searchParams.get('password') ?? ''
  return { username, password }
}

/** The statement as ClickHouse reads it: the `query` parameter, then the body (decompressed). */
async function statementOf(req: IncomingMessage, url: URL): Promise<string> {
  if (['1', 'true'].includes(url.searchParams.get('decompress') ?? ''))
    throw new DoorAnswer(
      400,
      1001,
      'BAD_REQUEST_PARAMETER',
      "decompress=1 (ClickHouse's own block compression of the request) is not supported at Tally's analyst door: send the statement plain or with Content-Encoding gzip, deflate, br or zstd",
    )
  if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/'))
    throw new DoorAnswer(
      400,
      1001,
      'BAD_REQUEST_PARAMETER',
      "External tables (multipart requests) are not supported at Tally's analyst door",
    )
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase().trim()
  let body: Readable | NodeJS.ReadWriteStream = req
  if (encoding && encoding !== 'identity') {
    const decompress = DECOMPRESS[encoding]
    if (!decompress)
      throw new DoorAnswer(
        415,
        1001,
        'UNKNOWN_COMPRESSION_METHOD',
        `Content-Encoding ${encoding} is not supported: gzip, deflate, br or zstd`,
      )
    body = req.pipe(decompress())
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_STATEMENT_BYTES)
        throw new DoorAnswer(
          413,
          1001,
          'BAD_REQUEST_PARAMETER',
          `The statement is over ${MAX_STATEMENT_BYTES} bytes`,
        )
      chunks.push(chunk)
    }
  } catch (err) {
    if (err instanceof DoorAnswer) throw err
    throw new DoorAnswer(
      400,
      1001,
      'CANNOT_DECOMPRESS',
      `The body could not be read as ${encoding || 'text'}: ${(err as Error).message}`,
    )
  }
  const text = Buffer.concat(chunks).toString('utf8')
  const param = url.searchParams.get('query')
  const statement = param === null ? text : text ? `${param}\n${text}` : param
  if (!statement.trim()) throw new DoorAnswer(400, 62, 'SYNTAX_ERROR', 'Empty query')
  return statement
}

function responseHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value
  return out
}

function relay(res: ServerResponse, status: number, headers: IncomingMessage['headers'], body: Buffer): void {
  res.writeHead(status, responseHeaders(headers)).end(body)
}

function answer(res: ServerResponse, err: DoorAnswer): void {
  res
    .writeHead(err.status, {
      'content-type': 'text/plain; charset=UTF-8',
      'x-clickhouse-exception-code': String(err.code),
      ...err.headers,
    })
    .end(`Code: ${err.code}. DB::Exception: ${err.message}. (${err.codeName})\n`)
}
