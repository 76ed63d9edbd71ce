import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { collectDefaultMetrics, register } from 'prom-client'
import type { Logger } from './logger.ts'
import { readiness } from './process/readiness.ts'
import type { ReadinessCheck } from './process/role.ts'

let defaultsCollected = false

/** Collects the process's own metrics (RSS, event-loop lag, GC) once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return
  collectDefaultMetrics()
  // Gauges named like counters (promtool warns); the per-type gauges beside them hold the same.
  for (const name of [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ])
    register.removeSingleMetric(name)
  defaultsCollected = true
}

/**
 * The port of a process without the API (a separate ingest or dispatcher): `GET /livez` (the
 * process answers), `GET /readyz` (every engine it uses answers and each consumer is a member of
 * its group that the broker lists and is progressing; 503 naming what is not, in the API's
 * envelope) and `GET /metrics` (Prometheus text of the same registry the API serves).
 */
export async function startHealthServer(options: {
  port: number
  host: string
  checks: readonly ReadinessCheck[]
  log: Logger
}): Promise<{ port: number; close(): Promise<void> }> {
  collectProcessMetrics()
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body))
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0]
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return json(res, 405, { data: null, error: 'Method not allowed' })
    if (path === '/livez') return json(res, 200, { data: { ok: true }, error: null })
    if (path === '/readyz') {
      readiness(options.checks, options.log).then(
        ({ error, ...data }) => json(res, error ? 503 : 200, { data, error }),
        () => json(res, 503, { data: null, error: 'Not ready' }),
      )
      return
    }
    if (path === '/metrics') {
      register.metrics().then(
        (body) => res.writeHead(200, { 'content-type': register.contentType }).end(body),
        () => res.writeHead(500).end(),
      )
      return
    }
    json(res, 404, { data: null, error: 'Not found' })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
