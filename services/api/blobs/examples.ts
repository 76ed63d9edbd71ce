/**
 * What the OpenAPI document shows for the signed blob links: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

export const examples = {
  getBlob: {
    parameters: {
      key: 'prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json',
      expires: '1795688717',
      signature: '6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70',
    },
    // A prompt body, as a version's s3_url links to it.
    answer: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: '{{ticket}}' }] },
  },
} satisfies Record<string, OperationExamples>
