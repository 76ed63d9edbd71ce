/**
 * What the OpenAPI document shows for the API key routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  createApiKey: {
    body: {
      name: 'ci-pipeline',
      role: 'member',
    },
    answer: {
      data: {
        id: '12d68392-e074-56bf-84a1-23b2c41ab304',
        name: 'ci-pipeline',
        key_prefix: 'tly_3q9Zx1cV',
        role: 'member',
        created_at: '2026-11-26T10:15:14.292Z',
        api_key: 'tly_3q9Zx1cVb7NmK2pL8wR4tY6uI0oPaSdFgHjKlZxCvBn',
      },
      error: null,
    },
  },
  listApiKeys: {
    answer: {
      data: [
        {
          id: 'eb5afb72-5cf2-5143-bd0f-b4773729df14',
          name: 'admin',
          key_prefix: 'tly_3q9Zx1cV',
          role: 'admin',
          created_at: '2026-11-26T10:15:14.270Z',
        },
        {
          id: '12d68392-e074-56bf-84a1-23b2c41ab304',
          name: 'ci-pipeline',
          key_prefix: 'tly_3q9Zx1cV',
          role: 'member',
          created_at: '2026-11-26T10:15:14.292Z',
        },
      ],
      error: null,
    },
  },
  deleteApiKey: {
    parameters: {
      id: '12d68392-e074-56bf-84a1-23b2c41ab304',
    },
    answer: {
      data: null,
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
