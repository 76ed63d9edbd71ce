import { z } from 'zod'

/**
 * A processed model request as it travels on the event topic. The wire format is the Avro
 * schema schemas/events/request-event.avsc; this is the in-memory shape, checked on both ends
 * (a test keeps the two field lists identical).
 */
export const requestEventSchema = z.object({
  request_id: z.uuid(),
  organization_id: z.uuid(),
  created_at: z.date(),
  completed_at: z.date(),
  latency_ms: z.number().int().min(0),
  time_to_first_token_ms: z.number().int().min(0).nullable(),
  provider: z.string(),
  model: z.string(),
  status: z.number().int(),
  target_url: z.string(),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  cost_usd: z.number().min(0),
  cached: z.boolean(),
  user_id: z.string(),
  session_id: z.string(),
  session_name: z.string(),
  session_path: z.string(),
  properties: z.record(z.string(), z.string()),
  prompt_id: z.string(),
  prompt_version_id: z.string(),
  request_body: z.string(),
  response_body: z.string(),
})

export type RequestEvent = z.infer<typeof requestEventSchema>

/** Bodies travel as JSON text; one that is not JSON is read as a string, an empty one as null. */
export function parseEventBody(text: string): unknown {
  if (text === '') return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
