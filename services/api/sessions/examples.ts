/**
 * What the OpenAPI document shows for the session routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

/** A day's sessions, newest first: querySessions and countSessions take the same body. */
const search = {
  timeFilter: {
    startTimeUnixMs: 1795046400000,
    endTimeUnixMs: 1795305600000,
  },
  timezoneDifference: 0,
  filter: 'all',
  limit: 25,
  sort: {
    latest_request_created_at: 'desc',
  },
}

export const examples = {
  getSession: {
    parameters: {
      id: 'ticket-5521',
    },
    answer: {
      data: {
        session_id: 'ticket-5521',
        session_name: 'Support triage',
        total_requests: 1,
        total_cost: 1.17e-5,
        total_tokens: 51,
        truncated: false,
        requests: [
          {
            request_id: 'b0e59b83-0614-5173-b173-f5b89613d1d6',
            parent_request_id: null,
            depth: 0,
            created_at: '2026-11-20T09:30:00.000Z',
            completed_at: '2026-11-20T09:30:01.240Z',
            latency_ms: 1240,
            provider: 'openai',
            model: 'gpt-4o-mini',
            status: 200,
            prompt_tokens: 42,
            completion_tokens: 9,
            total_tokens: 51,
            cost_usd: 1.17e-5,
            user_id: 'user-1842',
            session_path: '/triage/summary',
            trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
            span_id: '00f067aa0ba902b7',
            parent_span_id: '',
          },
        ],
      },
      error: null,
    },
  },
  querySessions: {
    body: search,
    answer: {
      data: [
        {
          session_id: 'ticket-5521',
          session_name: 'Support triage',
          created_at: '2026-11-20T09:30:00.000+00:00',
          latest_request_created_at: '2026-11-20T09:30:00.000+00:00',
          total_cost: 1.17e-5,
          total_requests: 1,
          prompt_tokens: 42,
          completion_tokens: 9,
          total_tokens: 51,
          avg_latency: 1240,
          user_ids: ['user-1842'],
        },
      ],
      error: null,
      next_cursor: null,
    },
  },
  countSessions: {
    body: search,
    answer: {
      data: {
        count: 1,
      },
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
