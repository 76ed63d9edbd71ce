/**
 * What the OpenAPI document shows for the SQL routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  querySql: {
    body: {
      sql: 'SELECT model, count() AS requests, round(sum(cost), 6) AS cost_usd FROM requests WHERE request_created_at >= {since:DateTime64(3)} GROUP BY model ORDER BY requests DESC LIMIT 10',
      params: {
        since: '2026-11-01 00:00:00.000',
      },
    },
    answer: {
      data: {
        columns: [
          {
            name: 'model',
            type: 'LowCardinality(String)',
          },
          {
            name: 'requests',
            type: 'UInt64',
          },
          {
            name: 'cost_usd',
            type: 'Float64',
          },
        ],
        rows: [
          {
            model: 'gpt-4o-mini',
            requests: '4',
            cost_usd: 3.3e-5,
          },
        ],
        row_count: 1,
        statistics: {
          elapsed_ms: 8,
        },
      },
      error: null,
    },
  },
  getSqlSchema: {
    answer: {
      data: {
        tables: [
          {
            name: 'requests',
            description: "Your organization's requests, one row each (deduplicated: no FINAL needed).",
            columns: [
              {
                name: 'request_id',
                type: 'UUID',
                description: "The request's id.",
              },
              {
                name: 'request_created_at',
                type: "DateTime64(3, 'UTC')",
                description: 'When the model request was sent (UTC, milliseconds).',
              },
              {
                name: 'response_created_at',
                type: "DateTime64(3, 'UTC')",
                description: 'When the response ended (UTC, milliseconds).',
              },
              {
                name: 'latency',
                type: 'UInt32',
                description: 'Milliseconds from request to end of response.',
              },
            ],
          },
          {
            name: 'sessions',
            description:
              "Your organization's sessions (requests with a session id), one row each, with their totals.",
            columns: [
              {
                name: 'session_id',
                type: 'String',
                description: "The session's id.",
              },
              {
                name: 'session_name',
                type: 'String',
                description: 'The name its latest request gave it.',
              },
              {
                name: 'first_request_at',
                type: "DateTime64(3, 'UTC')",
                description: 'When its first request was sent.',
              },
              {
                name: 'last_request_at',
                type: "DateTime64(3, 'UTC')",
                description: 'When its last request was sent.',
              },
            ],
          },
          {
            name: 'scores',
            description:
              "Your organization's live scores (deleted ones left out, each score once), of requests and sessions.",
            columns: [
              { name: 'id', type: 'UUID', description: "The score's id." },
              {
                name: 'request_id',
                type: 'Nullable(UUID)',
                description: 'The request it grades; NULL for a score of a session.',
              },
              { name: 'name', type: 'String', description: "The score's name, e.g. helpfulness." },
              {
                name: 'value',
                type: 'Float64',
                description:
                  'The number: a numeric score, 1 or 0 for a boolean one, 0 for a categorical one.',
              },
            ],
          },
        ],
      },
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
