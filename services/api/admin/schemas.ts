import { z } from 'zod'
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
  })
  .meta({ id: 'Organization' })
export type Organization = z.output<typeof organization>

export const createdOrganization = organization
  .extend({
    api_key: z.string().describe("The organization's first admin API key: in this answer and never again"),
  })
  .meta({ id: 'CreatedOrganization' })
