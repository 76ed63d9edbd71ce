import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { register } from 'prom-client'
import { z } from 'zod'
import { collectProcessMetrics } from '../../shared/metrics-server.ts'
import { publicErrorResponses } from '../http/envelope.ts'

/**
 * Prometheus text at /metrics: the pipeline's counters (declared next to the code that moves
 * them) plus the process's own (RSS, event loop lag). Unauthenticated, like /health: it holds
 * counts only, never an organization's data.
 */
export function metricsRoutes(): FastifyPluginAsyncZod {
  collectProcessMetrics()
  return async (app) => {
    app.get(
      '/metrics',
      {
        schema: {
          tags: ['health'],
          operationId: 'getMetrics',
          summary: 'Prometheus metrics',
          security: [],
          response: {
            200: {
              description: 'The Prometheus text exposition format',
              content: { [register.contentType]: { schema: z.string() } },
            },
            ...publicErrorResponses,
          },
        },
      },
      async (_req, reply) =>
        reply.header('content-type', register.contentType).send(await register.metrics()),
    )
  }
}
