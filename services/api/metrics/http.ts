import type { FastifyInstance } from 'fastify'
import { counter, histogram } from '../../shared/metrics.ts'

const requests = counter(
  'tally_http_requests_total',
  'HTTP requests answered, by method, route template and status',
  {
    labelNames: ['method', 'route', 'status'],
  },
)
const duration = histogram(
  'tally_http_request_duration_seconds',
  'Time from a request received to its answer sent, by method and route template',
  {
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  },
)

/**
 * Counts every answer and times it, labelled by the route's template (`/v1/request/:id`), never
 * the raw path: ids would make a series per request. Paths that match no route are `unmatched`.
 */
export function recordHttpMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const method = request.method
    requests.inc({ method, route, status: String(reply.statusCode) })
    duration.observe({ method, route }, reply.elapsedTime / 1000)
  })
}
