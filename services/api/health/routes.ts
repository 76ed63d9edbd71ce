import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { withDeadline } from '../../shared/deadline.ts'
import type { ReadinessCheck } from '../../shared/process/role.ts'
import { envelope, errorEnvelope, publicErrorResponses } from '../http/envelope.ts'

const TIMEOUT_MS = 2_000

const engineStates = z.object({ ready: z.boolean(), engines: z.record(z.string(), z.string()) })
const readiness = envelope(engineStates)
// Not ready is a failure: `error` says which engines, and `data` still lists them all.
const notReady = z.object({ data: engineStates, error: z.string() })

/** `/healthz`: the process answers. `/readyz`: every engine it uses answers, within 2 s each. */
export function healthRoutes(checks: ReadinessCheck[]): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/healthz', {
      schema: {
        tags: ['health'],
        operationId: 'checkHealth',
        summary: 'The process is up',
        security: [],
        response: { 200: envelope(z.object({ ok: z.literal(true) })), ...publicErrorResponses },
      },
      handler: async () => ({ data: { ok: true as const }, error: null }),
    })
    app.get('/readyz', {
      schema: {
        tags: ['health'],
        operationId: 'checkReadiness',
        summary: 'Every engine this process uses is reachable',
        security: [],
        // 503 also while the process shuts down, in the plain error envelope.
        response: { ...publicErrorResponses, 200: readiness, 503: z.union([notReady, errorEnvelope]) },
      },
      handler: async (request, reply) => {
        const results = await Promise.all(
          checks.map(async ({ name, check }) => {
            try {
              await withDeadline(check(), TIMEOUT_MS, 'no answer')
              return [name, 'ok'] as const
            } catch (err) {
              // Unauthenticated: the reason (hosts, ports) goes to the log, not the answer.
              request.log.warn({ engine: name, err }, 'readiness_check_failed')
              return [name, 'unavailable'] as const
            }
          }),
        )
        const down = results.filter(([, state]) => state !== 'ok').map(([name]) => name)
        const data = { ready: down.length === 0, engines: Object.fromEntries(results) }
        if (down.length === 0) return reply.code(200).send({ data, error: null })
        return reply.code(503).send({ data, error: `Not ready: ${down.join(', ')} unavailable` })
      },
    })
  }
}
