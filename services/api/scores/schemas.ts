import { z } from 'zod'
import { isoTimestamp } from '../http/envelope.ts'

/** Where a score may come from (docs/scores.md). */
const SCORE_SOURCES = ['api', 'annotation', 'eval'] as const
export type ScoreSource = (typeof SCORE_SOURCES)[number]

const SCORE_DATA_TYPES = ['numeric', 'boolean', 'categorical'] as const
export type ScoreDataType = (typeof SCORE_DATA_TYPES)[number]

/** The score Helicone's feedback route writes: a boolean named `feedback`. */
export const FEEDBACK = 'feedback'

const MAX_NAME = 200
const MAX_CATEGORY = 500
// A page of 1,000 scores stays within the answer's byte limit (32 MiB) whatever they hold.
const MAX_COMMENT = 4_000
/** Scores one call may set (Helicone's score route takes a map). */
export const MAX_SCORES_PER_CALL = 50
const MAX_CATEGORIES = 100
/** Score configs an organization may hold. */
export const MAX_CONFIGS = 200
/** As the intake takes them (services/api/requests/intake.ts). */
const MAX_SESSION_ID = 512
const MAX_PROPERTY_KEY = 256
const MAX_PROPERTY_VALUE = 4096

// Names are filter keys, column values and webhook fields: printable, no control characters.
const CONTROL = /\p{Cc}/u

export const scoreName = z
  .string('must be a string')
  .min(1, 'must not be empty')
  .max(MAX_NAME, `must be at most ${MAX_NAME} characters`)
  .refine((name) => !CONTROL.test(name), 'must not contain control characters')
  // A JSON key no parser of filters takes (it would set an object's prototype).
  .refine((name) => name !== '__proto__', 'must not be __proto__')
  .describe('The score’s name, e.g. helpfulness; `feedback` is the feedback (boolean)')

const category = z
  .string('must be a string')
  .min(1, 'must not be empty')
  .max(MAX_CATEGORY, `must be at most ${MAX_CATEGORY} characters`)

const scoreValue = z
  .union([z.number(), z.boolean(), category], {
    error: () => `must be a number, a boolean or a category (a string of 1 to ${MAX_CATEGORY} characters)`,
  })
  .describe('A number (numeric), true or false (boolean), or a category (categorical)')

const scoreTarget = z
  .union(
    [
      z.strictObject({ request_id: z.uuid('must be a UUID') }),
      z.strictObject({
        session_id: z
          .string('must be a string')
          .min(1, 'must not be empty')
          .max(MAX_SESSION_ID, `must be at most ${MAX_SESSION_ID} characters`),
      }),
    ],
    { error: () => 'must be {"request_id": "<uuid>"} or {"session_id": "<session id>"}' },
  )
  .describe('What the score grades: one request, or one session')

export const createScoreBody = z.strictObject({
  target: scoreTarget,
  name: scoreName,
  value: scoreValue,
  source: z
    .enum(SCORE_SOURCES, `must be one of ${SCORE_SOURCES.join(', ')}`)
    .default('api')
    .describe('Who graded: api (default), annotation (a person), eval (an evaluator)'),
  comment: z
    .string('must be a string')
    .max(MAX_COMMENT, `must be at most ${MAX_COMMENT} characters`)
    .optional(),
  id: z
    .uuid('must be a UUID')
    .optional()
    .describe(
      'Upsert by this id. Without it the id is derived from target, name and source, so sending the same again replaces it',
    ),
})

/** Scores one batch call may set. */
export const MAX_SCORES_PER_BATCH = 1000

export const createScoresBody = z.strictObject({
  scores: z
    .array(createScoreBody)
    .min(1, 'must hold at least one score')
    .max(MAX_SCORES_PER_BATCH, `must hold at most ${MAX_SCORES_PER_BATCH} scores`)
    .describe('Each as POST /v1/scores takes it; all are taken, or none'),
})

export const acceptedScores = z
  .object({
    ids: z.array(z.uuid()).describe('The scores’ ids, in the order sent'),
    status: z.literal('accepted').describe('Durable; they show in queries within seconds'),
  })
  .meta({ id: 'AcceptedScores' })

export const heliconeScoresBody = z.strictObject({
  scores: z
    .record(
      z.string(),
      z.union(
        [z.number().describe('numeric'), z.boolean().describe('boolean')],
        'must be a number or a boolean',
      ),
    )
    .describe(`Score name to value; at most ${MAX_SCORES_PER_CALL}`),
})

export const feedbackBody = z.strictObject({
  rating: z.boolean('must be true or false').describe('true: a good answer'),
})

export const propertyBody = z.strictObject({
  key: z
    .string('must be a string')
    .min(1, 'must not be empty')
    .max(MAX_PROPERTY_KEY, `must be at most ${MAX_PROPERTY_KEY} characters`)
    .refine((key) => key !== '__proto__', 'must not be __proto__'),
  value: z
    .string('must be a string')
    .max(MAX_PROPERTY_VALUE, `must be at most ${MAX_PROPERTY_VALUE} characters`),
})

export const requestIdParams = z.object({ id: z.uuid('must be a UUID') })
export const scoreIdParams = z.object({ id: z.uuid('must be a UUID') })

export const scoreConfigBody = z.strictObject({
  name: scoreName,
  data_type: z.enum(SCORE_DATA_TYPES, `must be one of ${SCORE_DATA_TYPES.join(', ')}`),
  min: z.number('must be a number').optional().describe('numeric only: the least value taken'),
  max: z.number('must be a number').optional().describe('numeric only: the greatest value taken'),
  categories: z
    .array(category)
    .min(1, 'must name at least one category')
    .max(MAX_CATEGORIES, `must name at most ${MAX_CATEGORIES} categories`)
    .optional()
    .describe('categorical only (and required there): the values taken'),
  description: z.string('must be a string').max(1000, 'must be at most 1000 characters').default(''),
})

export const scoreConfig = z
  .object({
    id: z.uuid(),
    name: z.string(),
    data_type: z.enum(SCORE_DATA_TYPES),
    min: z.number().nullable(),
    max: z.number().nullable(),
    categories: z.array(z.string()).nullable(),
    description: z.string(),
    created_at: isoTimestamp,
  })
  .meta({ id: 'ScoreConfig' })
export type ScoreConfig = z.output<typeof scoreConfig>

export const acceptedScore = z
  .object({
    id: z.uuid().describe('The score’s id: GET /v1/scores?id=… reads it back once stored'),
    status: z.literal('accepted').describe('Durable; it shows in queries within seconds'),
  })
  .meta({ id: 'AcceptedScore' })

export const score = z
  .object({
    id: z.uuid(),
    target: z.union([z.object({ request_id: z.uuid() }), z.object({ session_id: z.string() })]),
    name: z.string(),
    value: z.union([
      z.number().describe('numeric'),
      z.boolean().describe('boolean'),
      z.string().describe('categorical: the category'),
    ]),
    data_type: z.enum(SCORE_DATA_TYPES),
    source: z.string(),
    comment: z.string(),
    created_at: isoTimestamp,
    status: z
      .enum(['applied', 'pending', 'orphaned'])
      .describe(
        'applied: its request or session is stored; pending: not (yet), within the grace period; orphaned: still not after it',
      ),
  })
  .meta({ id: 'Score' })

export const SCORE_STATUSES = ['applied', 'pending', 'orphaned'] as const

export const listScoresQuery = z.strictObject({
  id: z.uuid('must be a UUID').optional(),
  request_id: z.uuid('must be a UUID').optional(),
  session_id: z.string().min(1).max(MAX_SESSION_ID).optional(),
  name: scoreName.optional(),
  source: z.enum(SCORE_SOURCES, `must be one of ${SCORE_SOURCES.join(', ')}`).optional(),
  status: z
    .enum(SCORE_STATUSES, `must be one of ${SCORE_STATUSES.join(', ')}`)
    .optional()
    .describe('Only scores of this status (docs/scores.md); orphaned reports scores whose target never came'),
  limit: z.coerce
    .number('must be a number')
    .int('must be an integer')
    .min(1, 'must be between 1 and 1000')
    .max(1000, 'must be between 1 and 1000')
    .default(100),
})
