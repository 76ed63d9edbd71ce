import { z } from 'zod'
import { parseEventBody } from '../../shared/events/request-event.ts'
import { isoTimestamp } from '../http/envelope.ts'
import type { RequestRow } from './repo.ts'

/** A request as the query and GET answer it. */
export const requestRecord = z.object({
  request_id: z.uuid(),
  created_at: isoTimestamp,
  completed_at: isoTimestamp,
  provider: z.string(),
  model: z.string(),
  status: z.number().int(),
  latency_ms: z.number().int(),
  time_to_first_token_ms: z.number().int().nullable(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost_usd: z.number(),
  cached: z.boolean(),
  user_id: z.string(),
  session_id: z.string(),
  session_name: z.string(),
  session_path: z.string(),
  properties: z.record(z.string(), z.string()),
  prompt_id: z.string(),
  prompt_version_id: z.string(),
  target_url: z.string(),
  request_body: z
    .unknown()
    .optional()
    .describe('The model request (JSON when it was JSON); with includeBody'),
  response_body: z.unknown().optional().describe('The model response (JSON, or its text); with includeBody'),
})

export type RequestRecord = z.infer<typeof requestRecord>

// ClickHouse answers DateTime64 as ISO without zone in some setups: read it as UTC.
const utc = (text: string) =>
  new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text.replace(' ', 'T')}Z`)

export function toRecord(row: RequestRow): RequestRecord {
  const record: RequestRecord = {
    request_id: row.request_id,
    created_at: utc(row.request_created_at),
    completed_at: utc(row.response_created_at),
    provider: row.provider,
    model: row.model,
    status: Number(row.status),
    latency_ms: Number(row.latency),
    time_to_first_token_ms: row.time_to_first_token === null ? null : Number(row.time_to_first_token),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    total_tokens: Number(row.total_tokens),
    cost_usd: Number(row.cost),
    cached: Boolean(row.cached),
    user_id: row.user_id,
    session_id: row.session_id,
    session_name: row.session_name,
    session_path: row.session_path,
    properties: row.properties,
    prompt_id: row.prompt_id,
    prompt_version_id: row.prompt_version,
    target_url: row.target_url,
  }
  if (row.request_body !== undefined) record.request_body = parseEventBody(row.request_body)
  if (row.response_body !== undefined) record.response_body = parseEventBody(row.response_body)
  return record
}
