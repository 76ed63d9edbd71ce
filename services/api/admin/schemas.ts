import { z } from 'zod'
import { MIN_RETENTION_DAYS } from '../../shared/clickhouse/retention.ts'
import { MAX_RETENTION_DAYS } from '../../shared/config.ts'
import { isoTimestamp } from '../http/envelope.ts'
import { pageParams } from '../http/paging.ts'

// Control characters (NUL, newlines, …): Postgres text cannot hold NUL, and a name is shown on one line.
const CONTROL = /\p{Cc}/u
// Bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C) reorder what follows on display.
const BIDI = /\p{Bidi_Control}/u

const objectRequired = (issue: { code: string }) =>
  issue.code === 'invalid_type' ? 'must be a JSON object' : undefined

export const createOrganizationBody = z.strictObject(
  {
    name: z
      .string('must be a string')
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .refine((name) => !CONTROL.test(name), 'must not contain control characters (NUL, newlines, …)')
      .refine(
        (name) => !BIDI.test(name),
        'must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, …)',
      ),
  },
  { error: objectRequired },
)

export const organizationsQuery = z.strictObject(pageParams)

export const organizationParams = z.strictObject({ id: z.uuid('must be a UUID') })

export const organization = z
  .object({
    id: z.uuid(),
    name: z.string(),
    created_at: isoTimestamp,
    retention_days: z
      .int()
      .nullable()
      .describe(
        "How many days ClickHouse keeps what the organization records; null: the instance's TALLY_RETENTION_DAYS (kept for good when that is unset)",
      ),
  })
  .meta({ id: 'Organization' })
export type Organization = z.output<typeof organization>

export const createdOrganization = organization
  .extend({
    api_key: z.string().describe("The organization's first admin API key: in this answer and never again"),
  })
  .meta({ id: 'CreatedOrganization' })

export const organizationChangeBody = z.strictObject(
  {
    retention_days: z
      .int('must be a whole number of days, or null')
      .min(MIN_RETENTION_DAYS, `must be at least ${MIN_RETENTION_DAYS}`)
      .max(MAX_RETENTION_DAYS, `must be at most ${MAX_RETENTION_DAYS}`)
      .nullable()
      .describe(
        "Days ClickHouse keeps the organization's requests (from their created_at), their hourly session and metrics rows, and its scores and property updates (from when they were set); null: the instance's TALLY_RETENTION_DAYS",
      ),
  },
  { error: objectRequired },
)
