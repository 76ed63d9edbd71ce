/**
 * What the OpenAPI document shows for the instance-admin API: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  createOrganization: {
    body: {
      name: 'Acme Research',
    },
    answer: {
      data: {
        id: '50fb8ae3-cc90-50f8-ab99-71652f7ec0c4',
        name: 'Acme Research',
        created_at: '2026-11-26T10:15:14.270Z',
        retention_days: null,
        api_key: 'tly_3q9Zx1cVb7NmK2pL8wR4tY6uI0oPaSdFgHjKlZxCvBn',
      },
      error: null,
    },
  },
  listOrganizations: {
    parameters: {
      limit: 50,
    },
    answer: {
      data: [
        {
          id: '942665c1-1730-5568-b7cf-fc002a962dcc',
          name: 'Acme Research',
          created_at: '2026-11-26T10:15:00.522Z',
          retention_days: 90,
        },
      ],
      error: null,
    },
  },
  changeOrganization: {
    parameters: {
      id: '50fb8ae3-cc90-50f8-ab99-71652f7ec0c4',
    },
    body: {
      retention_days: 90,
    },
    answer: {
      data: {
        id: '50fb8ae3-cc90-50f8-ab99-71652f7ec0c4',
        name: 'Acme Research',
        created_at: '2026-11-26T10:15:14.270Z',
        retention_days: 90,
      },
      error: null,
    },
  },
  deleteOrganization: {
    parameters: {
      id: '50fb8ae3-cc90-50f8-ab99-71652f7ec0c4',
    },
    answer: {
      data: null,
      error: null,
    },
  },
} satisfies Record<string, OperationExamples>
