import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { RequestEvent } from '../../shared/events/request-event.ts'
import { counter } from '../../shared/metrics.ts'
import { uuidInput, wholeNumber } from '../http/inputs.ts'
import { costOf, type PriceTable } from './prices.ts'
import { extractUsage } from './usage.ts'

/** The largest value of every int field: the event's Avro ints and ClickHouse's columns hold int32. */
export const INT32_MAX = 2 ** 31 - 1
/** Largest cost_usd one request may carry: any number of them sums to a finite Float64. */
const MAX_COST_USD = 1_000_000
/** How far in the future a time may lie: clock skew, not a typo or a seconds/ms mix-up. */
const MAX_FUTURE_MS = 24 * 60 * 60 * 1000
export const TIME_RANGE_RULE = 'must be between 1970-01-01T00:00:00Z and 24 hours from now'

/** A time Tally stores: from the Unix epoch to a day ahead (DateTime64(3, 'UTC') holds up to 2299). */
export const inTimeRange = (ms: number, now = Date.now()) =>
  Number.isFinite(ms) && ms >= 0 && ms <= now + MAX_FUTURE_MS

/** A time as ISO 8601 text or Unix epoch milliseconds. */
const instant = z
  .union([
    z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp or epoch milliseconds' }),
    z.number().int('must be an ISO 8601 timestamp or epoch milliseconds'),
  ])
  .refine((t) => inTimeRange(typeof t === 'number' ? t : Date.parse(t)), TIME_RANGE_RULE)

const tokens = wholeNumber(0, INT32_MAX)

const spanId = z
  .string()
  .regex(/^[0-9a-f]{16}$/i, 'must be 16 hexadecimal digits (a W3C span id)')
  .refine((id) => !/^0+$/.test(id), 'must not be all zeros')
  .overwrite((id) => id.toLowerCase())

/** One model request as a caller logs it (POST /v1/request/log). */
export const intakeEvent = z.strictObject({
  request_id: uuidInput
    .optional()
    .describe('Generated when absent; a re-sent id (in any letter case) replaces'),
  created_at: instant
    .optional()
    .describe('When the model request was sent (1970 to 24 h from now); default: now − latency'),
  completed_at: instant
    .optional()
    .describe('When the response ended (1970 to 24 h from now); default: created_at + latency'),
  latency_ms: tokens.optional().describe('Default: completed_at − created_at, or 0'),
  time_to_first_token_ms: tokens.optional(),
  provider: z
    .string()
    .max(100)
    .optional()
    .describe(
      'Default: from target_url, else the model (price table, then its family), else the response shape, else "custom"',
    ),
  model: z.string().max(200).optional().describe('Default: request.model, else the response model'),
  target_url: z.string().max(2048).optional(),
  request: z.unknown().optional().describe('The model request as sent'),
  response: z.unknown().optional().describe('The model response: a JSON object, or stream text'),
  status: z.number().int().min(-1000).max(1000).default(200).describe('HTTP status of the model response'),
  user_id: z.string().max(512).optional(),
  properties: z
    .record(z.string().max(256), z.string().max(4096, 'must be at most 4096 characters'))
    .optional(),
  session_id: z.string().max(512).optional(),
  session_name: z.string().max(512).optional(),
  session_path: z.string().max(1024).optional(),
  prompt_id: z.string().max(256).optional(),
  prompt_version_id: z.string().max(256).optional(),
  prompt_tokens: tokens.optional().describe('Default: from the response usage'),
  completion_tokens: tokens.optional().describe('Default: from the response usage'),
  cost_usd: z
    .number()
    .min(0, 'must be at least 0')
    .max(MAX_COST_USD, `must be at most ${MAX_COST_USD}`)
    .optional()
    .describe(`USD, at most ${MAX_COST_USD} (sums stay finite); default: from schemas/prices/models.json`),
  cached: z.boolean().default(false),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/i, 'must be 32 hexadecimal digits (a W3C trace id)')
    .refine((id) => !/^0+$/.test(id), 'must not be all zeros')
    .overwrite((id) => id.toLowerCase())
    .optional()
    .describe('OpenTelemetry trace id of the model call'),
  span_id: spanId.optional().describe("OpenTelemetry span id of the model call: the session tree's node"),
  parent_span_id: spanId.optional().describe("The parent span's id: the session tree's edge"),
})

export type IntakeEvent = z.infer<typeof intakeEvent>

const clamped = counter(
  'tally_intake_values_clamped_total',
  `Values derived by Tally (tokens read from a response, latency from two times) cut to ${INT32_MAX}`,
  {
    labelNames: ['field'],
  },
)

/** A derived count within int32; a larger one is cut to the maximum and counted. */
function clamp(field: string, value: number): number {
  if (value <= INT32_MAX) return value
  clamped.inc({ field })
  return INT32_MAX
}

const PROVIDER_HOSTS: [RegExp, string][] = [
  [/(^|\.)openai\.com$/, 'openai'],
  [/(^|\.)anthropic\.com$/, 'anthropic'],
  [/(^|\.)googleapis\.com$/, 'google'],
  [/(^|\.)openai\.azure\.com$/, 'azure'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)mistral\.ai$/, 'mistral'],
  [/(^|\.)openrouter\.ai$/, 'openrouter'],
]

// Where the URL says nothing (Helicone's stream helpers post `custom-model-nopath`): the model's
// family, then the response's shape.
const MODEL_FAMILIES: [RegExp, string][] = [
  [/^(gpt-|o\d|chatgpt-|text-embedding-|dall-e|whisper|tts-)/, 'openai'],
  [/^claude/, 'anthropic'],
  [/^(gemini|gemma)/, 'google'],
  [/^(mistral|mixtral|codestral|ministral|pixtral)/, 'mistral'],
]

function providerOfModel(prices: PriceTable, model: string): string | undefined {
  const name = model.trim().toLowerCase()
  const vendor = /^([a-z0-9-]+)\//.exec(name)?.[1] // a router's prefix: openai/gpt-4o
  if (vendor && ['openai', 'anthropic', 'google', 'mistral'].includes(vendor)) return vendor
  return (
    prices.find(name)?.provider ??
    MODEL_FAMILIES.find(([re]) => re.test(name.replace(/^[a-z0-9-]+\//, '')))?.[1]
  )
}

function providerOfResponse(response: unknown): string | undefined {
  if (typeof response !== 'object' || response === null) return undefined
  const r = response as Record<string, unknown>
  if (r.type === 'message' && typeof r.id === 'string' && r.id.startsWith('msg_')) return 'anthropic'
  if (typeof r.object === 'string' && r.object.startsWith('chat.completion')) return 'openai'
  if (Array.isArray(r.candidates) && typeof r.usageMetadata === 'object') return 'google'
  return undefined
}

function providerOf(url: string | undefined): string | undefined {
  if (!url) return undefined
  try {
    const host = new URL(url).hostname
    return PROVIDER_HOSTS.find(([re]) => re.test(host))?.[1]
  } catch {
    return undefined
  }
}

const toDate = (v: string | number | undefined) => (v === undefined ? undefined : new Date(v))

const bodyText = (v: unknown): string =>
  v === undefined ? '' : typeof v === 'string' ? v : (JSON.stringify(v) ?? '')

const modelIn = (body: unknown): string | undefined => {
  if (typeof body !== 'object' || body === null) return undefined
  const model = (body as { model?: unknown }).model
  return typeof model === 'string' && model ? model : undefined
}

/**
 * The complete event for one logged request: times reconciled, tokens read from the response
 * unless given, cost priced from the table unless given, session from its fields or else from
 * Helicone's session properties.
 */
export function toRequestEvent(
  input: IntakeEvent,
  organizationId: string,
  prices: PriceTable,
  now = new Date(),
): RequestEvent {
  let created = toDate(input.created_at)
  let completed = toDate(input.completed_at)
  const given = input.latency_ms
  if (created && completed) {
    if (completed < created) completed = created
  } else if (created) completed = new Date(created.getTime() + (given ?? 0))
  else if (completed) created = new Date(Math.max(0, completed.getTime() - (given ?? 0)))
  else {
    completed = now
    created = new Date(now.getTime() - (given ?? 0))
  }
  const start = created as Date
  const end = completed as Date
  const latency = given ?? clamp('latency_ms', end.getTime() - start.getTime())

  // Caller-given counts are validated (≤ int32); counts read from the response are clamped.
  const usage = extractUsage(input.response)
  const prompt = input.prompt_tokens ?? clamp('prompt_tokens', usage.prompt)
  const completion = input.completion_tokens ?? clamp('completion_tokens', usage.completion)
  const total = clamp(
    'total_tokens',
    input.prompt_tokens !== undefined || input.completion_tokens !== undefined
      ? prompt + completion
      : Math.max(usage.total, prompt + completion),
  )
  const model = input.model ?? modelIn(input.request) ?? usage.model ?? ''

  // The properties are stored as sent. A session field left out is read from the property
  // Helicone would give it (a caller moving from Helicone keeps its properties).
  const properties = { ...input.properties }
  const session = {
    id: input.session_id ?? properties['Helicone-Session-Id'] ?? '',
    name: input.session_name ?? properties['Helicone-Session-Name'] ?? '',
    path: input.session_path ?? properties['Helicone-Session-Path'] ?? '',
  }

  return {
    request_id: input.request_id ?? randomUUID(),
    organization_id: organizationId,
    created_at: start,
    completed_at: end,
    latency_ms: latency,
    time_to_first_token_ms: input.time_to_first_token_ms ?? null,
    provider: (
      input.provider ??
      providerOf(input.target_url) ??
      providerOfModel(prices, model) ??
      providerOfResponse(input.response) ??
      'custom'
    ).toLowerCase(),
    model,
    status: input.status,
    target_url: input.target_url ?? '',
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total,
    cost_usd: input.cost_usd ?? costOf(prices, model, { prompt, completion }),
    cached: input.cached,
    user_id: input.user_id ?? '',
    session_id: session.id,
    session_name: session.name,
    session_path: session.path,
    properties,
    prompt_id: input.prompt_id ?? '',
    prompt_version_id: input.prompt_version_id ?? '',
    request_body: bodyText(input.request),
    response_body: bodyText(input.response),
    trace_id: input.trace_id ?? '',
    span_id: input.span_id ?? '',
    parent_span_id: input.parent_span_id ?? '',
  }
}
