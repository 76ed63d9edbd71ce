import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { collectDefaultMetrics, register } from 'prom-client'

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
 * GET /metrics for processes without the API (a separate ingest or dispatcher): Prometheus text
 * of the same registry the API serves.
 */
export async function startMetricsServer(
  port: number,
  host: string,
): Promise<{ port: number; close(): Promise<void> }> {
  collectProcessMetrics()
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end()
      return
    }
    register.metrics().then(
      (body) => res.writeHead(200, { 'content-type': register.contentType }).end(body),
      () => res.writeHead(500).end(),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
