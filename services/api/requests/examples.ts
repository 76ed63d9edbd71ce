/**
 * What the OpenAPI document shows for the request routes, Helicone's included: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

/** The envelope of a success. */
const ok = (data: unknown) => ({ data, error: null })

/** What the logged call sent to the model and what it answered. */
const call = {
  request: {
    model: 'gpt-4o-mini',
    messages: [
      {
        role: 'user',
        content: 'Summarise this ticket in one line.',
      },
    ],
  },
  response: {
    choices: [
      {
        message: {
          role: 'assistant',
          content: 'Customer cannot reset their password.',
        },
      },
    ],
    usage: {
      prompt_tokens: 42,
      completion_tokens: 9,
      total_tokens: 51,
    },
  },
}

/** The request logRequests' example logs, as the request query answers it. */
const record = {
  request_id: 'b0e59b83-0614-5173-b173-f5b89613d1d6',
  created_at: '2026-11-20T09:30:00.000Z',
  completed_at: '2026-11-20T09:30:01.240Z',
  latency_ms: 1240,
  time_to_first_token_ms: 310,
  provider: 'openai',
  model: 'gpt-4o-mini',
  status: 200,
  target_url: 'https://api.openai.com/v1/chat/completions',
  prompt_tokens: 42,
  completion_tokens: 9,
  total_tokens: 51,
  cost_usd: 1.17e-5,
  cached: false,
  user_id: 'user-1842',
  session_id: 'ticket-5521',
  session_name: 'Support triage',
  session_path: '/triage/summary',
  properties: {
    team: 'support',
    environment: 'production',
  },
  prompt_id: '',
  prompt_version_id: '',
  trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
  span_id: '00f067aa0ba902b7',
  parent_span_id: '',
}

/** A log through a Helicone-compatible path: each of them takes the same body. */
const heliconeLog = {
  body: {
    providerRequest: {
      url: 'https://api.openai.com/v1/chat/completions',
      json: {
        model: 'gpt-4o-mini',
        messages: [
          {
            role: 'user',
            content: 'Hello',
          },
        ],
      },
      meta: {
        'Helicone-User-Id': 'user-1842',
      },
    },
    providerResponse: {
      json: {
        choices: [
          {
            message: {
              role: 'assistant',
              content: 'Hi! How can I help?',
            },
          },
        ],
        usage: {
          prompt_tokens: 8,
          completion_tokens: 6,
        },
      },
      status: 200,
      headers: {},
    },
    timing: {
      startTime: {
        seconds: 1795685400,
        milliseconds: 0,
      },
      endTime: {
        seconds: 1795685400,
        milliseconds: 850,
      },
    },
    provider: 'openai',
  },
  answer: {
    data: {
      request_id: '89bb34cb-e396-55f3-8030-46c7c6bbfd15',
    },
    error: null,
  },
}

export const examples = {
  logRequests: {
    body: {
      ...{
        model: 'gpt-4o-mini',
        provider: 'openai',
        target_url: 'https://api.openai.com/v1/chat/completions',
        created_at: '2026-11-20T09:30:00.000Z',
        completed_at: '2026-11-20T09:30:01.240Z',
        time_to_first_token_ms: 310,
        status: 200,
        user_id: 'user-1842',
        properties: {
          team: 'support',
          environment: 'production',
        },
        session_id: 'ticket-5521',
        session_name: 'Support triage',
        session_path: '/triage/summary',
        prompt_tokens: 42,
        completion_tokens: 9,
        trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
        span_id: '00f067aa0ba902b7',
      },
      ...call,
    },
    answer: {
      data: {
        request_ids: ['b0e59b83-0614-5173-b173-f5b89613d1d6'],
      },
      error: null,
    },
  },
  queryRequests: {
    body: {
      filter: {
        request_response_rmt: {
          model: {
            equals: 'gpt-4o-mini',
          },
        },
      },
      limit: 10,
      sort: {
        created_at: 'desc',
      },
    },
    answer: { ...ok([record]), next_cursor: null },
  },
  getRequest: {
    parameters: {
      id: 'b0e59b83-0614-5173-b173-f5b89613d1d6',
    },
    answer: ok({ ...record, request_body: call.request, response_body: call.response }),
  },
  listModels: {
    answer: {
      data: {
        currency: 'USD',
        unit: 'per 1M tokens',
        as_of: '2025-08-31',
        sources: {
          openai: 'https://openai.com/api/pricing/ (standard tier, text tokens)',
          anthropic:
            'https://www.anthropic.com/pricing#api (base input and output; cache writes and reads not priced separately here)',
          google:
            'https://ai.google.dev/gemini-api/docs/pricing (paid tier, prompts up to the first price break)',
        },
        models: [
          {
            provider: 'openai',
            model: 'gpt-4o-mini',
            input: 0.15,
            output: 0.6,
          },
          {
            provider: 'anthropic',
            model: 'claude-sonnet-4',
            input: 3,
            output: 15,
          },
          {
            provider: 'google',
            model: 'gemini-2.5-flash',
            input: 0.3,
            output: 2.5,
          },
        ],
      },
      error: null,
    },
  },
  logHeliconeCustom: heliconeLog,
  logHeliconeOpenAi: heliconeLog,
  logHeliconeAnthropic: heliconeLog,
  logHeliconeGoogle: heliconeLog,
  logHeliconeTrace: heliconeLog,
} satisfies Record<string, OperationExamples>
