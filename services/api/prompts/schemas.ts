import { z } from 'zod'
import { isoTimestamp } from '../http/envelope.ts'

export const PRODUCTION = 'production'
const PAGE_SIZES = [10, 25, 50, 100] as const
/** Largest create/update request accepted; the body is stored once per version, never edited. */
export const PROMPT_REQUEST_LIMIT_BYTES = 512 * 1024

export const id = z.guid('must be a UUID')

const environmentName = z
  .string({ error: 'must be a string' })
  .regex(/^[a-z0-9_-]{1,64}$/, 'must be 1 to 64 lowercase letters, digits, - or _')

export const promptName = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')

export const tagList = z
  .array(
    z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, 'must not be empty')
      .max(64, 'must be at most 64 characters'),
    { error: 'must be an array of strings' },
  )
  .max(50, 'must hold at most 50 tags')

const contentPart = z.looseObject({ type: z.string({ error: 'must be a string' }) })

const message = z.looseObject({
  role: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
  content: z
    .union([z.string(), z.array(contentPart), z.null()], {
      error: 'must be a string, an array of content parts or null',
    })
    .optional(),
})

/**
 * A version's complete model configuration, stored once and never changed. Parameters beyond
 * the ones named here (top_p, response_format, …) are kept as given.
 */
export const promptBody = z
  .looseObject({
    model: z.string({ error: 'is required: a string naming the model' }).min(1, 'must not be empty').max(200),
    messages: z
      .array(message, { error: 'must be an array of messages' })
      .min(1, 'must hold at least one message'),
    temperature: z.number({ error: 'must be a number' }).min(0, 'must be at least 0').optional(),
    max_tokens: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .positive('must be positive')
      .optional(),
    tools: z.array(z.looseObject({}), { error: 'must be an array of objects' }).optional(),
  })
  .meta({
    id: 'PromptBody',
    description: 'messages, model, temperature, max_tokens, tools and any other model parameters',
  })

export type PromptBody = z.infer<typeof promptBody>

export const prompt = z
  .object({
    id: z.guid(),
    name: z.string(),
    tags: z.array(z.string()),
    created_at: isoTimestamp,
  })
  .meta({ id: 'Prompt' })

export const promptVersion = z
  .object({
    id: z.guid(),
    prompt_id: z.guid(),
    model: z.string(),
    major_version: z.number().int(),
    minor_version: z.number().int(),
    commit_message: z.string(),
    environments: z.array(z.string()).describe('Environments this version is deployed to; may be empty'),
    created_at: isoTimestamp,
    storage_url: z.string().describe('Where the body is kept: its key in object storage'),
  })
  .meta({ id: 'PromptVersion' })

export type PromptVersion = z.infer<typeof promptVersion>

export const versionCounts = z.object({ totalVersions: z.number().int(), majorVersions: z.number().int() })

export const linkedVersion = promptVersion
  .extend({
    s3_url: z
      .string()
      .describe(
        'A link that returns the body JSON with no Authorization header, until it expires (TALLY_SIGNED_LINK_TTL)',
      ),
  })
  .meta({ id: 'PromptVersionWithLink' })

export type LinkedVersion = z.infer<typeof linkedVersion>

export const versionWithBody = linkedVersion
  .extend({ prompt_body: promptBody })
  .meta({ id: 'PromptVersionWithBody' })

export const createPromptBody = z.strictObject({
  name: promptName,
  tags: tagList.default([]),
  promptBody,
})

export const newVersionBody = z.strictObject({
  promptId: id,
  promptVersionId: id.describe('The version this one is based on'),
  newMajorVersion: z.boolean({ error: 'must be true or false' }),
  environment: environmentName.optional().describe('Deploy the new version to this environment at once'),
  commitMessage: z.string({ error: 'must be a string' }).max(1000, 'must be at most 1000 characters'),
  promptBody,
})

export const queryBody = z
  .strictObject({
    search: z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters'),
    tagsFilter: z
      .array(z.string(), { error: 'must be an array of strings' })
      .max(50, 'must hold at most 50 tags'),
    page: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(10_000_000, 'must be at most 10000000')
      .optional()
      .describe('0-indexed; required unless offset or limit is given'),
    pageSize: z
      .literal(PAGE_SIZES, { error: `must be one of ${PAGE_SIZES.join(', ')}` })
      .optional()
      .describe('Required unless offset or limit is given'),
    offset: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(1_000_000_000, 'must be at most 1000000000')
      .optional()
      .describe(
        "Alias (Tally's paging elsewhere): prompts skipped; with limit, instead of page and pageSize",
      ),
    limit: z
      .number({ error: 'must be a number' })
      .int('must be an integer')
      .min(1, 'must be between 1 and 100')
      .max(100, 'must be between 1 and 100')
      .optional()
      .describe('Alias: prompts per page (default 10), instead of pageSize'),
  })
  .superRefine((b, ctx) => {
    if (b.offset !== undefined || b.limit !== undefined) {
      const mixed = b.page !== undefined ? 'page' : b.pageSize !== undefined ? 'pageSize' : undefined
      if (mixed)
        ctx.addIssue({ code: 'custom', path: [mixed], message: 'must be left out with offset and limit' })
      return
    }
    // The seed's scheme: both are required.
    if (b.page === undefined) ctx.addIssue({ code: 'custom', path: ['page'], message: 'must be a number' })
    if (b.pageSize === undefined) {
      ctx.addIssue({ code: 'custom', path: ['pageSize'], message: `must be one of ${PAGE_SIZES.join(', ')}` })
    }
  })

/** The page of a prompt query, by either scheme (the schema has checked which one). */
export function promptPage(b: z.output<typeof queryBody>): { offset: number; limit: number } {
  if (b.pageSize !== undefined) return { offset: (b.page ?? 0) * b.pageSize, limit: b.pageSize }
  return { offset: b.offset ?? 0, limit: b.limit ?? 10 }
}

export const versionsBody = z.strictObject({
  promptId: id,
  majorVersion: z.number({ error: 'must be a number' }).int('must be an integer').min(1).optional(),
})

export const promptIdBody = z.strictObject({ promptId: id })
export const versionIdBody = z.strictObject({ promptVersionId: id })
export const environmentVersionBody = z.strictObject({ promptId: id, environment: environmentName })
export const environmentChangeBody = z.strictObject({
  promptId: id,
  promptVersionId: id,
  environment: environmentName,
})
