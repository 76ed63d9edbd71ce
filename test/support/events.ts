import { randomUUID } from 'node:crypto'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'

/** A complete, valid request event; override what the test is about. */
export function sampleEvent(overrides: Partial<RequestEvent> = {}): RequestEvent {
  return {
    request_id: randomUUID(),
    organization_id: randomUUID(),
    created_at: new Date('2026-11-01T10:00:00.000Z'),
    completed_at: new Date('2026-11-01T10:00:01.250Z'),
    latency_ms: 1250,
    time_to_first_token_ms: 300,
    provider: 'openai',
    model: 'gpt-4o-mini',
    status: 200,
    target_url: 'https://api.openai.com/v1/chat/completions',
    prompt_tokens: 12,
    completion_tokens: 30,
    total_tokens: 42,
    cost_usd: 0.0000198,
    cached: false,
    user_id: 'user-1',
    session_id: 'session-1',
    session_name: 'Support chat',
    session_path: '/support',
    properties: { env: 'test' },
    prompt_id: '',
    prompt_version_id: '',
    trace_id: '',
    span_id: '',
    parent_span_id: '',
    request_body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    response_body: JSON.stringify({ id: 'x', choices: [] }),
    ...overrides,
  }
}
