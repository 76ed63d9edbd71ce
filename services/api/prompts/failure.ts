import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'

/**
 * A route error handler for the endpoints whose failure message the spec fixes (section 7.3):
 * a server-side failure answers 500 with exactly that message; anything the caller did wrong
 * goes on to the API's handler, which names the field and the rule.
 */
export function failingWith(message: string) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const status = err instanceof AppError ? err.status : (err.statusCode ?? 500)
    if (status < 500) throw err
    request.log.error({ err }, 'request_failed')
    return reply.code(500).send({ data: null, error: message })
  }
}
