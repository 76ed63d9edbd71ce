import { maxHeaderSize, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod'
import { BlobStoreUnavailable } from '../../shared/blobs/blob-store.ts'
import { AppError, badRequest } from '../../shared/errors.ts'
import type { Logger } from '../../shared/logger.ts'
import { isPostgresUnavailable } from '../../shared/postgres.ts'

interface ValidationItem {
  instancePath?: string
  message?: string
  params?: { issue?: { path?: PropertyKey[]; message?: string } }
}

/** "body.pageSize: must be one of 10, 25, 50, 100" from a zod validation failure. */
function describeValidation(context: string | undefined, items: ValidationItem[]): string {
  const lines = items.map((item) => {
    const path = item.params?.issue?.path ?? item.instancePath?.split('/').filter(Boolean) ?? []
    const where = [context ?? 'body', ...path.map(String)].join('.')
    return `${where}: ${item.params?.issue?.message ?? item.message ?? 'invalid'}`
  })
  // Two checks of one field can say the same (wholeNumber's int() and max() for 1e20): once.
  return [...new Set(lines)].slice(0, 5).join('; ')
}

const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'body: is not valid JSON' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'body: is larger than this endpoint accepts' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'Content-Length: does not match the body' },
}

/**
 * The 415 of a body that is not JSON: its Content-Type missing, or another media type. JSON is
 * application/json alone (any letter case, parameters such as charset=utf-8 allowed): a +json
 * type such as application/json-patch+json means other semantics than the route's, so it is
 * refused rather than read as its plain document. The OTLP routes take their own types (otlp/).
 */
function unsupportedMediaType(request: FastifyRequest): string {
  const given = request.headers['content-type'] ?? ''
  return given.trim() === ''
    ? 'Content-Type: is missing; a body must be application/json'
    : `Content-Type: must be application/json, got ${JSON.stringify(given.slice(0, 80))}`
}

/** One error handler for the whole API: every failure leaves as `{ data: null, error }`. */
export function installErrorHandling(
  app: FastifyInstance,
  allowedMethods?: (path: string) => string[],
): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof AppError) {
      if (err.status >= 500) request.log.error({ err }, 'request_failed')
      // RFC 9110: a 401 names the scheme the client should use.
      if (err.status === 401) reply.header('www-authenticate', 'Bearer')
      if (err.retryAfterSeconds !== undefined) reply.header('retry-after', err.retryAfterSeconds)
      // A 500 is a bug, whose message is for the log; other statuses (a 503 raised on purpose
      // when a dependency is down) tell the caller what to do.
      return reply
        .code(err.status)
        .send({ data: null, error: err.status === 500 ? internalMessage(request.id) : err.message })
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      return reply
        .code(400)
        .send({ data: null, error: describeValidation(err.validationContext, err.validation) })
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return reply.code(415).send({ data: null, error: unsupportedMediaType(request) })
    const known = err.code ? CLIENT_ERRORS[err.code] : undefined
    if (known) return reply.code(known.status).send({ data: null, error: known.message })
    if (isResponseSerializationError(err)) {
      request.log.error({ err, issues: err.cause.issues }, 'response_does_not_match_schema')
      return reply.code(500).send({ data: null, error: internalMessage(request.id) })
    }
    if (err instanceof BlobStoreUnavailable) {
      // Nothing was written: a prompt's row follows its body, and the body's write failed.
      request.log.error({ err }, 'blob_store_unavailable')
      return reply
        .code(503)
        .header('retry-after', 5)
        .send({ data: null, error: 'Object storage is unavailable for now; retry the request' })
    }
    if (isPostgresUnavailable(err)) {
      // Postgres refused or dropped the connection (its transaction, if any, was rolled back).
      request.log.error({ err }, 'postgres_unavailable')
      return reply.code(503).send({ data: null, error: 'Postgres is unavailable for now; retry the request' })
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ data: null, error: err.message })
    }
    request.log.error({ err }, 'request_failed')
    return reply.code(500).send({ data: null, error: internalMessage(request.id) })
  })
  // What Node and fastify would otherwise answer themselves, outside the envelope.
  app.server.on('checkExpectation', (_req, res: ServerResponse) => {
    const body = JSON.stringify({ data: null, error: 'headers.expect: only 100-continue is supported' })
    res
      .writeHead(417, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      })
      .end(body)
  })
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (request) => {
    if (closing)
      throw new AppError(503, 'shutting_down', 'This Tally process is shutting down; retry the request')
    if (request.raw.httpVersion === '1.1' && !request.headers.host)
      throw badRequest('headers.host: is required in HTTP/1.1')
  })
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] as string
    const allowed = allowedMethods?.(path) ?? []
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({
          data: null,
          error: `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
        })
    }
    reply.code(404).send({ data: null, error: `Route ${request.method} ${path} not found` })
  })
}

/** Path parameters longer than this are refused with 414 before any route runs. */
export const MAX_PARAM_LENGTH = 100

/** Errors fastify finds while routing, before any hook or handler: a URL it cannot decode. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // These replies skip the onSend hooks.
  reply.header('x-request-id', request.id)
  if (err.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send({ data: null, error: 'path: is not valid percent-encoding' })
  } else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.code(414).send({
      data: null,
      error: `path: a path parameter is longer than ${MAX_PARAM_LENGTH} characters`,
    })
  } else {
    request.log.error({ err }, 'request_failed')
    reply.code(500).send({ data: null, error: internalMessage(request.id) })
  }
}

/**
 * Requests Node's HTTP parser refuses before fastify sees them (headers over its limit, a request
 * not received in time, bytes that are not HTTP) are answered in the envelope on the raw socket.
 */
export function clientErrorHandler(log: Logger, timeouts: { headersMs: number; requestMs: number }) {
  const answerTo = (err: ConnectionError): [status: number, error: string] => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      return [
        408,
        `request: not received in time (headers within ${timeouts.headersMs / 1000} s, the whole request within ${timeouts.requestMs / 1000} s)`,
      ]
    if (err.code === 'HPE_HEADER_OVERFLOW')
      return [431, `headers: are larger than ${maxHeaderSize} bytes in all`]
    return [400, `request: is not valid HTTP/1.1 (${err.code ?? err.message})`]
  }
  return (err: ConnectionError, socket: Socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const [status, error] = answerTo(err)
    log.debug({ code: err.code, status }, 'client_error')
    // As Node does: answer only when no response to this request has begun.
    const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage
    if (socket.writable && !response?.headersSent) {
      const body = JSON.stringify({ data: null, error })
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy(err)
  }
}

function internalMessage(requestId: string): string {
  return `Internal server error (request id ${requestId})`
}
