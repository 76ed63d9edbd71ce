import type { FastifyError, FastifyInstance } from 'fastify'
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod'
import { AppError } from '../../shared/errors.ts'

interface ValidationItem {
  instancePath?: string
  message?: string
  params?: { issue?: { path?: PropertyKey[]; message?: string } }
}

/** "body.pageSize: must be one of 10, 25, 50, 100" from a zod validation failure. */
function describeValidation(context: string | undefined, items: ValidationItem[]): string {
  return items
    .slice(0, 5)
    .map((item) => {
      const path = item.params?.issue?.path ?? item.instancePath?.split('/').filter(Boolean) ?? []
      const where = [context ?? 'body', ...path.map(String)].join('.')
      return `${where}: ${item.params?.issue?.message ?? item.message ?? 'invalid'}`
    })
    .join('; ')
}

const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'body: is not valid JSON' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'body: is larger than this endpoint accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'Content-Type: must be application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: 'Content-Length: does not match the body' },
}

/** One error handler for the whole API: every failure leaves as `{ data: null, error }`. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof AppError) {
      if (err.status >= 500) request.log.error({ err }, 'request_failed')
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
    const known = err.code ? CLIENT_ERRORS[err.code] : undefined
    if (known) return reply.code(known.status).send({ data: null, error: known.message })
    if (isResponseSerializationError(err)) {
      request.log.error({ err, issues: err.cause.issues }, 'response_does_not_match_schema')
      return reply.code(500).send({ data: null, error: internalMessage(request.id) })
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ data: null, error: err.message })
    }
    request.log.error({ err }, 'request_failed')
    return reply.code(500).send({ data: null, error: internalMessage(request.id) })
  })
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send({ data: null, error: `Route ${request.method} ${request.url.split('?')[0]} not found` })
  })
}

function internalMessage(requestId: string): string {
  return `Internal server error (request id ${requestId})`
}
