import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SESSION_PROPERTIES } from '../../shared/clickhouse/request-table.ts'
import { badRequest } from '../../shared/errors.ts'
import { principalOf } from '../http/auth.ts'
import { envelope, ok, responses } from '../http/envelope.ts'
import { INT32_MAX, type IntakeEvent, inTimeRange, TIME_RANGE_RULE } from './intake.ts'
import type { Intake } from './service.ts'

// {seconds, milliseconds} as Helicone's loggers send, ISO text, or an epoch number (seconds
// below 1e11, otherwise milliseconds: 1e11 ms is 1973, 1e11 s is the year 5138).
const time = z.union([
  z.object({ seconds: z.number().int().min(0), milliseconds: z.number().int().min(0).max(999_999) }),
  z.iso.datetime({ offset: true }),
  z.number().min(0),
])

function toMs(t: z.infer<typeof time>): number {
  if (typeof t === 'string') return Date.parse(t)
  if (typeof t === 'number') return t < 1e11 ? Math.round(t * 1000) : Math.round(t)
  return t.seconds * 1000 + t.milliseconds
}

const heliconeLog = z.object({
  providerRequest: z.object({
    url: z.string().max(2048).default(''),
    json: z.unknown().default({}),
    meta: z.record(z.string(), z.unknown()).default({}),
  }),
  providerResponse: z.object({
    json: z.unknown().optional(),
    textBody: z.string().optional(),
    status: z.number().int().min(-1000).max(1000).default(200),
    headers: z.record(z.string(), z.unknown()).default({}),
  }),
  timing: z.object({
    startTime: time,
    endTime: time,
    timeToFirstToken: z
      .number()
      .min(0, 'must be at least 0')
      .max(INT32_MAX, `must be at most ${INT32_MAX} (milliseconds)`)
      .optional(),
  }),
  provider: z.string().max(100).optional(),
})

// Path, provider, operationId.
const ROUTES = [
  ['/custom/v1/log', undefined, 'logHeliconeCustom'],
  ['/oai/v1/log', 'openai', 'logHeliconeOpenAi'],
  ['/anthropic/v1/log', 'anthropic', 'logHeliconeAnthropic'],
  ['/googleapis/v1/log', 'google', 'logHeliconeGoogle'],
  ['/v1/trace/custom/log', undefined, 'logHeliconeTrace'],
] as const

const PROVIDER_NAMES: Record<string, string> = { OPENAI: 'openai', ANTHROPIC: 'anthropic', GOOGLE: 'google' }

/**
 * Helicone-compatible intake: the body HeliconeManualLogger posts, with metadata in
 * Helicone-* (or Tally-*) headers. Answers like POST /v1/request/log.
 */
export function heliconeRoutes(deps: { intake: Intake; maxBytes: number }): FastifyPluginAsyncZod {
  return async (app) => {
    for (const [path, routeProvider, operationId] of ROUTES) {
      app.post(path, {
        bodyLimit: deps.maxBytes,
        config: { takesEvents: true },
        schema: {
          tags: ['requests'],
          operationId,
          summary: `Helicone-compatible log intake (${path})`,
          description:
            'Headers: Helicone-Property-<Name>, Helicone-Session-Id/-Name/-Path, Helicone-User-Id, Helicone-Request-Id, Helicone-Prompt-Id (also with a Tally- prefix).',
          body: heliconeLog,
          response: responses({ 201: envelope(z.object({ request_id: z.uuid() })) }, { body: true }),
        },
        handler: async (request, reply) => {
          const { organizationId } = principalOf(request)
          const event = toIntakeEvent(request.body, request.raw.rawHeaders, routeProvider)
          const [id] = await deps.intake(organizationId, [event], () => 'body')
          return reply.code(201).send(ok({ request_id: id as string }))
        },
      })
    }
  }
}

const HEADER_PREFIXES = {
  /** Helicone's paths: Helicone-X and Tally-X headers, the Tally one winning. */
  helicone: /^(helicone|tally)-(.+)$/i,
  /** Tally's own paths: Tally-X headers only. */
  tally: /^(tally)-(.+)$/i,
}

/**
 * Tally-X headers — and on Helicone's paths Helicone-X headers too, the Tally one winning —
 * from the raw header list (which keeps the caller's spelling of property names). Keys are
 * lower-cased except property names.
 */
export function metadata(rawHeaders: string[], path: keyof typeof HEADER_PREFIXES) {
  const prefixes = HEADER_PREFIXES[path]
  // Own keys only: a property named toString or __proto__ is a property like any other.
  const out: Record<string, string> = Object.create(null)
  const properties: Record<string, string> = Object.create(null)
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const m = prefixes.exec(rawHeaders[i] as string)
    if (!m) continue
    const tally = (m[1] as string).toLowerCase() === 'tally'
    const rest = m[2] as string
    const value = rawHeaders[i + 1] as string
    const property = /^property-(.+)$/i.exec(rest)
    const [target, key] = property ? [properties, property[1] as string] : [out, rest.toLowerCase()]
    if (tally || !Object.hasOwn(target, key)) target[key] = value
  }
  return { meta: out, properties }
}

function toIntakeEvent(
  body: z.infer<typeof heliconeLog>,
  rawHeaders: string[],
  routeProvider: string | undefined,
): IntakeEvent {
  const { meta, properties } = metadata(rawHeaders, 'helicone')
  const requestId = meta['request-id']
  if (requestId !== undefined && !z.uuid().safeParse(requestId).success) {
    throw badRequest('headers.helicone-request-id: must be a UUID')
  }
  const start = toMs(body.timing.startTime)
  const end = toMs(body.timing.endTime)
  if (!inTimeRange(start)) throw badRequest(`body.timing.startTime: ${TIME_RANGE_RULE}`)
  if (!inTimeRange(end)) throw badRequest(`body.timing.endTime: ${TIME_RANGE_RULE}`)
  const { json, textBody, status } = body.providerResponse
  const hasJson = typeof json === 'object' && json !== null && Object.keys(json).length > 0
  const given = body.provider ? (PROVIDER_NAMES[body.provider.toUpperCase()] ?? body.provider) : undefined
  const event: IntakeEvent = {
    created_at: start,
    completed_at: Math.max(start, end),
    provider: given ?? routeProvider,
    target_url: body.providerRequest.url,
    request: body.providerRequest.json,
    response: hasJson ? json : (textBody ?? ''),
    status,
    cached: false,
    properties,
  }
  if (requestId) event.request_id = requestId.toLowerCase()
  if (body.timing.timeToFirstToken !== undefined)
    event.time_to_first_token_ms = Math.round(body.timing.timeToFirstToken)
  if (meta['user-id']) event.user_id = meta['user-id']
  if (meta['session-id']) event.session_id = meta['session-id']
  if (meta['session-name']) event.session_name = meta['session-name']
  if (meta['session-path']) event.session_path = meta['session-path']
  if (meta['prompt-id']) event.prompt_id = meta['prompt-id']
  return withSessionProperties(event)
}

/**
 * A request that came through Helicone's paths carries its session as Helicone stores it: also
 * as the properties Helicone-Session-Id/-Name/-Path. Tally's own paths store properties as sent.
 */
export function withSessionProperties(event: IntakeEvent): IntakeEvent {
  const properties = { ...event.properties }
  for (const [name, field] of Object.entries(SESSION_PROPERTIES)) {
    const value = event[field]
    if (value) properties[name] = value
  }
  return { ...event, properties }
}
