import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { rng } from '../support/random.ts'

// Every JSON route of the OpenAPI document, driven with generated hostile bodies: each answer is
// the envelope, never a 5xx, and nothing the organization can see in Postgres or ClickHouse
// changes. The generator is seeded, so a failure replays.
let tally: TestTally
let org: TestOrg
beforeAll(async () => {
  tally = await startTestTally()
  org = await tally.newOrg()
})
afterAll(() => tally?.close())

/** Values no route may take anywhere, as JSON text (1e400 cannot be made by JSON.stringify). */
const HOSTILE: string[] = [
  '"a\\u0000b"',
  '"\\ud800"',
  '"x\\udfffy"',
  '1e400',
  '-1e400',
  `${'['.repeat(150)}1${']'.repeat(150)}`,
  `${'{"a":'.repeat(150)}1${'}'.repeat(150)}`,
]
// Whole bodies that are not what any route takes.
const HOSTILE_BODIES = [...HOSTILE, 'null', 'true', '[]', '"x"', '{"__proto__":{"polluted":true}}']
// The Helicone-compatible intakes (/custom/v1/log, /oai/v1/log, …) are lenient about extra
// fields, as the Helicone client needs.
const lenient = (path: string) => path !== '/v1/request/log' && path.endsWith('/log')
// The OTLP intakes ignore unknown fields, as the OTLP specification asks, and accept with an
// ExportTraceServiceResponse (an object, never the envelope); their failures are the envelope.
const OTLP = new Set(['/v1/traces', '/v1/otel/v1/traces', '/v1/trace/log'])

type Schema = {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  default?: unknown
  format?: string
  minimum?: number
  maximum?: number
  minItems?: number
  minLength?: number
}

interface Route {
  method: string
  path: string
  schema: Schema
}

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document as JSON
let doc: any

/** The JSON-body operations of the document. */
async function jsonRoutes(): Promise<Route[]> {
  doc = (await tally.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const routes: Route[] = []
  for (const [path, ops] of Object.entries<
    Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>
  >(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const schema = op.requestBody?.content?.['application/json']?.schema
      if (schema) routes.push({ method: method.toUpperCase(), path, schema })
    }
  }
  return routes
}

const resolve = (s: Schema): Schema =>
  s.$ref
    ? resolve(
        s.$ref
          .split('/')
          .slice(1)
          .reduce((o, k) => o[k], doc) as Schema,
      )
    : s

/** A value the schema takes (as far as a schema can tell: patterns and cross-field rules aside). */
function valid(given: Schema, next: () => number, depth = 0): unknown {
  const s = resolve(given)
  if (s.const !== undefined) return s.const
  if (s.enum) return s.enum[0]
  const alternatives = s.anyOf ?? s.oneOf
  if (alternatives)
    return valid(
      alternatives.find((a) => resolve(a).type !== 'null') ?? (alternatives[0] as Schema),
      next,
      depth,
    )
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  if (depth > 6) return s.default ?? null
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, p] of Object.entries(s.properties ?? {}))
        if (s.required?.includes(k) || next() < 0.5) out[k] = valid(p, next, depth + 1)
      return out
    }
    case 'array':
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => valid(s.items ?? {}, next, depth + 1))
    case 'string':
      if (s.format === 'uuid') return randomUUID()
      if (s.format === 'date-time') return new Date().toISOString()
      if (s.format === 'uri') return 'https://example.com/x'
      return 'a'.repeat(Math.max(1, s.minLength ?? 1))
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 1, 1))
    case 'boolean':
      return false
    default:
      return s.default ?? 'x'
  }
}

/** Every place in a value a hostile value can go: [parent, key] pairs. */
function places(v: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []) {
  if (Array.isArray(v))
    for (const [i, x] of v.entries()) {
      out.push([v, i])
      places(x, out)
    }
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, k])
      places(x, out)
    }
  return out
}

const MARK = '__HOSTILE__'

/** A body the route takes, with one hostile value (or an unknown key) put in; as JSON text. */
function hostileBody(route: Route, next: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)] as T
  if (next() < 0.1) return pick(HOSTILE_BODIES)
  const body = valid(route.schema, next)
  const spots = places(body)
  // Unknown keys at the top (nested objects such as a prompt body take extra parameters).
  if (!lenient(route.path) && body && typeof body === 'object' && !Array.isArray(body) && next() < 0.2) {
    ;(body as Record<string, unknown>).unknownKey = 'x'
    return JSON.stringify(body)
  }
  if (spots.length === 0) return pick(HOSTILE_BODIES)
  const [parent, key] = pick(spots)
  ;(parent as Record<string | number, unknown>)[key] = MARK
  return JSON.stringify(body).replace(`"${MARK}"`, pick(HOSTILE))
}

async function stored(): Promise<Record<string, number>> {
  const pg = await tally.sql<{ table: string; n: number }[]>`
    select 'prompts' as table, count(*)::int as n from prompts where organization_id = ${org.organizationId}
    union all select 'webhooks', count(*)::int from webhooks where organization_id = ${org.organizationId}
    union all select 'api_keys', count(*)::int from api_keys where organization_id = ${org.organizationId}`
  const rs = await tally.clickhouse.query({
    query: 'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID}',
    query_params: { org: org.organizationId },
    format: 'JSONEachRow',
  })
  const [ch] = await rs.json<{ n: number }>()
  return { ...Object.fromEntries(pg.map((r) => [r.table, r.n])), requests: Number(ch?.n) }
}

describe('every JSON route with generated hostile bodies', () => {
  it('answers the envelope, never a 5xx, and stores nothing', async () => {
    const routes = await jsonRoutes()
    expect(routes.length).toBeGreaterThan(15)
    const bodiesFor = 40
    const before = await stored()
    const next = rng(20261123)
    const failures: string[] = []
    let sent = 0
    for (const route of routes) {
      const url = route.path.replace(/\{[^}]+\}/g, () => randomUUID())
      for (let i = 0; i < bodiesFor; i++) {
        const payload = hostileBody(route, next)
        const res = await tally.app.inject({
          method: route.method as 'POST',
          url,
          headers: { ...org.headers, 'content-type': 'application/json' },
          payload,
        })
        sent++
        let body: { data?: unknown; error?: unknown } | undefined
        try {
          body = res.json()
        } catch {
          body = undefined
        }
        const envelope = body !== undefined && 'data' in body && 'error' in body
        const otlpAnswer =
          OTLP.has(route.path) && res.statusCode === 200 && typeof body === 'object' && !envelope
        if (res.statusCode >= 500 || !(envelope || otlpAnswer))
          failures.push(
            `${route.method} ${route.path} ${res.statusCode} ${payload.slice(0, 120)} → ${res.body.slice(0, 200)}`,
          )
      }
    }
    expect(failures, failures.slice(0, 10).join('\n')).toEqual([])
    expect(sent).toBe(routes.length * bodiesFor)
    const after = await stored()
    expect(after, JSON.stringify({ before, after })).toEqual(before)
  }, 120_000)
})
