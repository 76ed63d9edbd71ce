import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { register } from 'prom-client'
import { collectProcessMetrics } from '../../shared/metrics-server.ts'

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
      { schema: { tags: ['health'], summary: 'Prometheus metrics' } },
      async (_req, reply) =>
        reply.header('content-type', register.contentType).send(await register.metrics()),
    )
  }
}
