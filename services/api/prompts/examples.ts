/**
 * What the OpenAPI document shows for the prompt routes: a request each operation takes and its
 * answer. test/api/openapi-document.test.ts sends each request and checks each answer against the schema.
 */
import type { OperationExamples } from '../http/openapi.ts'

/** The envelope of a success. */
const ok = (data: unknown) => ({ data, error: null })

const prompt = {
  id: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
  name: 'ticket-summary-v2',
  tags: ['support', 'triage'],
  created_at: '2026-11-26T10:15:17.169Z',
}

/** The version createPromptVersion's example makes, deployed to production and staging. */
const version = {
  id: '71dd6e63-a6e5-5f3c-bec3-4a4a301a633b',
  prompt_id: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
  model: 'gpt-4o-mini',
  major_version: 1,
  minor_version: 1,
  commit_message: 'Shorter summaries',
  environments: ['production', 'staging'],
  created_at: '2026-11-26T10:15:17.198Z',
  storage_url:
    'prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json',
}

/** The same with a signed link to its body. */
const linked = {
  ...version,
  s3_url:
    'http://127.0.0.1:8787/blobs/prompts/50fb8ae3-cc90-50f8-ab99-71652f7ec0c4/f6fbdaef-c1ab-51c9-b218-52ad5caaa49e/71dd6e63-a6e5-5f3c-bec3-4a4a301a633b.json?expires=1795688717&signature=6f1c0e6d9b1a4c5e8f7a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70',
}

/** Its body, as createPromptVersion's example sends it. */
const body = {
  model: 'gpt-4o-mini',
  messages: [
    {
      role: 'system',
      content: 'You summarise support tickets in one line.',
    },
    {
      role: 'user',
      content: '{{ticket}}',
    },
  ],
  temperature: 0.2,
  max_tokens: 120,
}

export const examples = {
  createPrompt: {
    body: { name: 'ticket-summary', tags: ['support'], promptBody: { ...body, max_tokens: 200 } },
    answer: {
      data: {
        id: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
        versionId: 'fe83534a-8ca8-5913-9f02-4856a04ac1c0',
      },
      error: null,
    },
  },
  queryPrompts: {
    body: {
      search: 'ticket',
      tagsFilter: ['support'],
      page: 0,
      pageSize: 10,
    },
    answer: ok([prompt]),
  },
  getPrompt: {
    parameters: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
    },
    answer: ok(prompt),
  },
  renamePrompt: {
    parameters: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
    },
    body: {
      name: 'ticket-summary-v2',
    },
    answer: ok(prompt),
  },
  setPromptTags: {
    parameters: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
    },
    body: {
      tags: ['support', 'triage'],
    },
    answer: ok(prompt),
  },
  deletePrompt: {
    parameters: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
    },
    answer: ok(null),
  },
  listPromptTags: { answer: ok(['support', 'triage']) },
  listPromptEnvironments: { answer: ok(['production', 'staging']) },
  createPromptVersion: {
    body: {
      ...{
        promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
        promptVersionId: 'fe83534a-8ca8-5913-9f02-4856a04ac1c0',
        newMajorVersion: false,
        environment: 'staging',
        commitMessage: 'Shorter summaries',
      },
      promptBody: body,
    },
    answer: {
      data: {
        id: '71dd6e63-a6e5-5f3c-bec3-4a4a301a633b',
      },
      error: null,
    },
  },
  queryPromptVersions: { body: { promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e' }, answer: ok([version]) },
  countPromptVersions: {
    body: { promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e' },
    answer: ok({ totalVersions: 2, majorVersions: 1 }),
  },
  getPromptVersion: { body: { promptVersionId: version.id }, answer: ok(linked) },
  getProductionVersion: { body: { promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e' }, answer: ok(linked) },
  getEnvironmentVersion: {
    body: { promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e', environment: 'staging' },
    answer: ok(linked),
  },
  getPromptVersionWithBody: {
    body: { promptVersionId: version.id },
    answer: ok({ ...linked, prompt_body: body }),
  },
  getProductionVersionWithBody: {
    body: { promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e' },
    answer: ok({ ...linked, prompt_body: body }),
  },
  getEnvironmentVersionWithBody: {
    body: { promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e', environment: 'staging' },
    answer: ok({ ...linked, prompt_body: body }),
  },
  getPromptBody: { parameters: { promptVersionId: version.id }, answer: ok(body) },
  deployPromptVersion: {
    body: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
      promptVersionId: version.id,
      environment: 'production',
    },
    answer: ok(version),
  },
  undeployPromptVersion: {
    body: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
      promptVersionId: version.id,
      environment: 'staging',
    },
    answer: ok({ ...version, environments: ['production'] }),
  },
  deletePromptVersion: {
    parameters: {
      promptId: 'f6fbdaef-c1ab-51c9-b218-52ad5caaa49e',
      versionId: 'fe83534a-8ca8-5913-9f02-4856a04ac1c0',
    },
    answer: ok(null),
  },
} satisfies Record<string, OperationExamples>
