import type { FastifyInstance } from 'fastify'

/**
 * Records every route as it is registered, so that a request whose path exists under other
 * methods is answered 405 with `Allow` instead of 404. Install before the routes.
 */
export function trackRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: { pattern: RegExp; methods: string[] }[] = []
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String)
    if (methods.every((m) => m === 'OPTIONS')) return // CORS preflight routes match every path
    const pattern = route.url
      .split(/(:[^/]+|\*)/)
      .map((part) =>
        part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('')
    routes.push({ pattern: new RegExp(`^${pattern}/?$`), methods })
  })
  return (path) => {
    const allowed = new Set<string>()
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m)
    if (allowed.has('GET')) allowed.add('HEAD')
    return [...allowed].sort()
  }
}
