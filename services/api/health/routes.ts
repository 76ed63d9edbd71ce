import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { Logger } from '../../shared/logger.ts'
import { readiness as checkReadiness } from '../../shared/process/readiness.ts'
import type { ReadinessCheck } from '../../shared/process/role.ts'
import { envelope, errorEnvelope, publicErrorResponses } from '../http/envelope.ts'

const engineStates = z.object({ ready: z.boolean(), engines: z.record(z.string(), z.string()) })
const readiness = envelope(engineStates)
// Not ready is a failure: `error` says which engines, and `data` still lists them all.
const notReady = z.object({ data: engineStates, error: z.string() })
const alive = envelope(z.object({ ok: z.literal(true) }))

/**
 * `/healthz` and `/livez`: the process answers. `/readyz`: every engine it uses answers, and
 * each consumer group this process runs has it as a member that is progressing; 3 s per check.
 */
export function healthRoutes(checks: ReadinessCheck[], log: Logger): FastifyPluginAsyncZod {
  return async (app) => {
    for (const [path, operationId] of [
      ['/healthz', 'checkHealth'],
      ['/livez', 'checkLiveness'],
    ] as const)
      app.get(path, {
        schema: {
          tags: ['health'],
          operationId,
          summary: 'The process is up',
          security: [],
          response: { 200: alive, ...publicErrorResponses },
        },
        handler: async () => ({ data: { ok: true as const }, error: null }),
      })
    app.get('/readyz', {
      schema: {
        tags: ['health'],
        operationId: 'checkReadiness',
        summary: 'Every engine this process uses is reachable, and its consumers are in their groups',
        security: [],
        // 503 also while the process shuts down, in the plain error envelope.
        response: { ...publicErrorResponses, 200: readiness, 503: z.union([notReady, errorEnvelope]) },
      },
      handler: async (_request, reply) => {
        const { error, ...data } = await checkReadiness(checks, log)
        if (error === null) return reply.code(200).send({ data, error: null })
        return reply.code(503).send({ data, error })
      },
    })
  }
}
