import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { RequestEvent } from '../../shared/events/request-event.ts'
import { costOf, type PriceTable } from './prices.ts'
import { extractUsage } from './usage.ts'

/** A time as ISO 8601 text or Unix epoch milliseconds. */
export const instant = z.union([
  z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp or epoch milliseconds' }),
  z.number().int().min(0, 'must be an ISO 8601 timestamp or epoch milliseconds'),
])

const tokens = z
  .number()
  .int()
  .min(0, 'must be a whole number ≥ 0')
  .max(2 ** 31 - 1)

/** One model request as a caller logs it (POST /v1/request/log). */
export const intakeEvent = z.object({
  request_id: z.uuid('must be a UUID').optional().describe('Generated when absent; a re-sent id replaces'),
  created_at: instant.optional().describe('When the model request was sent; default: now − latency'),
  completed_at: instant.optional().describe('When the response ended; default: created_at + latency'),
  latency_ms: tokens.optional().describe('Default: completed_at − created_at, or 0'),
  time_to_first_token_ms: tokens.optional(),
  provider: z.string().max(100).optional().describe('Default: from target_url, else "custom"'),
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
  cost_usd: z.number().min(0, 'must be ≥ 0').optional().describe('Default: from schemas/prices/models.json'),
  cached: z.boolean().default(false),
})

export type IntakeEvent = z.infer<typeof intakeEvent>

// Properties that carry a session however it arrived (Helicone headers become these names).
export const SESSION_PROPERTIES = {
  id: 'Helicone-Session-Id',
  name: 'Helicone-Session-Name',
  path: 'Helicone-Session-Path',
} as const

const PROVIDER_HOSTS: [RegExp, string][] = [
  [/(^|\.)openai\.com$/, 'openai'],
  [/(^|\.)anthropic\.com$/, 'anthropic'],
  [/(^|\.)googleapis\.com$/, 'google'],
  [/(^|\.)openai\.azure\.com$/, 'azure'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)mistral\.ai$/, 'mistral'],
  [/(^|\.)openrouter\.ai$/, 'openrouter'],
]

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
 * unless given, cost priced from the table unless given, session copied between its columns
 * and its properties.
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
  else if (completed) created = new Date(completed.getTime() - (given ?? 0))
  else {
    completed = now
    created = new Date(now.getTime() - (given ?? 0))
  }
  const start = created as Date
  const end = completed as Date
  const latency = given ?? end.getTime() - start.getTime()

  const usage = extractUsage(input.response)
  const prompt = input.prompt_tokens ?? usage.prompt
  const completion = input.completion_tokens ?? usage.completion
  const total =
    input.prompt_tokens !== undefined || input.completion_tokens !== undefined
      ? prompt + completion
      : usage.total
  const model = input.model ?? modelIn(input.request) ?? usage.model ?? ''

  const properties = { ...input.properties }
  const session = {
    id: input.session_id ?? properties[SESSION_PROPERTIES.id] ?? '',
    name: input.session_name ?? properties[SESSION_PROPERTIES.name] ?? '',
    path: input.session_path ?? properties[SESSION_PROPERTIES.path] ?? '',
  }
  if (session.id) properties[SESSION_PROPERTIES.id] = session.id
  if (session.name) properties[SESSION_PROPERTIES.name] = session.name
  if (session.path) properties[SESSION_PROPERTIES.path] = session.path

  return {
    request_id: input.request_id ?? randomUUID(),
    organization_id: organizationId,
    created_at: start,
    completed_at: end,
    latency_ms: Math.min(latency, 2 ** 31 - 1),
    time_to_first_token_ms: input.time_to_first_token_ms ?? null,
    provider: (input.provider ?? providerOf(input.target_url) ?? 'custom').toLowerCase(),
    model,
    status: input.status,
    target_url: input.target_url ?? '',
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: Math.min(total, 2 ** 31 - 1),
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
  }
}
