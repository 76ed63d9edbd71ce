/**
 * What the OpenAPI document shows for the health routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  checkHealth: {
    answer: {
      data: {
        ok: true,
      },
      error: null,
    },
  },
  checkLiveness: {
    answer: {
      data: {
        ok: true,
      },
      error: null,
    },
  },
  checkReadiness: {
    answer: {
      data: {
        ready: true,
        engines: {
          postgres: 'ok',
          clickhouse: 'ok',
          'blobs (filesystem)': 'ok',
        },
      },
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
