/**
 * What the OpenAPI document shows for the score routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

const ok = (data: unknown) => ({ data, error: null })

const REQUEST_ID = '7b7e961d-254e-5401-8ee5-9452b893e55b'

const helpfulness = {
  id: 'c0a8012e-5b1f-5e3a-9d41-2f6c3b7a9e10',
  name: 'helpfulness',
  data_type: 'numeric',
  min: 0,
  max: 1,
  categories: null,
  description: 'How well the answer helped, 0 to 1',
  created_at: '2026-11-27T09:00:00.000Z',
}

export const examples = {
  createScore: {
    body: { target: { request_id: REQUEST_ID }, name: 'helpfulness', value: 0.9, source: 'annotation' },
    answer: ok({ id: '5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42', status: 'accepted' }),
  },
  createScores: {
    body: {
      scores: [
        { target: { request_id: REQUEST_ID }, name: 'faithfulness', value: 0.7, source: 'eval' },
        { target: { session_id: 'ticket-5521' }, name: 'resolved', value: true, source: 'eval' },
      ],
    },
    answer: ok({
      ids: ['1f0c2a7e-3b9d-5c4e-a8f1-6d2e9b7c3a51', '8e4d1b6c-2a7f-5e3b-9c0d-4f1a7e2b6c83'],
      status: 'accepted',
    }),
  },
  listScores: {
    parameters: { name: 'helpfulness', limit: 10 },
    answer: {
      ...ok([
        {
          id: '5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42',
          target: { request_id: REQUEST_ID },
          name: 'helpfulness',
          value: 0.9,
          data_type: 'numeric',
          source: 'annotation',
          comment: '',
          created_at: '2026-11-27T09:01:00.000Z',
          status: 'applied',
        },
      ]),
      next_cursor: null,
    },
  },
  deleteScore: { parameters: { id: '5d8b7e35-0a1c-5f4e-8b2d-9c3e7f1a6b42' }, answer: ok(null) },
  addRequestScores: {
    parameters: { id: REQUEST_ID },
    body: { scores: { accuracy: 0.82, hallucination: false } },
    answer: ok(null),
  },
  addRequestFeedback: { parameters: { id: REQUEST_ID }, body: { rating: true }, answer: ok(null) },
  setRequestProperty: {
    parameters: { id: REQUEST_ID },
    body: { key: 'reviewed-by', value: 'support' },
    answer: ok(null),
  },
  createScoreConfig: {
    body: {
      name: 'helpfulness',
      data_type: 'numeric',
      min: 0,
      max: 1,
      description: 'How well the answer helped, 0 to 1',
    },
    answer: ok(helpfulness),
  },
  listScoreConfigs: { answer: ok([helpfulness]) },
  deleteScoreConfig: { parameters: { id: helpfulness.id }, answer: ok(null) },
} satisfies Record<string, OperationExamples>
