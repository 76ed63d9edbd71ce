import { z } from 'zod'
import { isoTimestamp } from '../http/envelope.ts'

export const keyRole = z.enum(['admin', 'member'])

/** An API key as the key routes answer it: never its secret nor its hash. */
export const apiKey = z
  .object({
    id: z.uuid(),
    name: z.string(),
    key_prefix: z.string().describe('The first characters of the secret'),
    role: keyRole,
    created_at: isoTimestamp,
  })
  .meta({ id: 'ApiKey' })

/** A key as created: with its secret, in this answer only. */
export const createdApiKey = apiKey
  .extend({ api_key: z.string().describe('The secret: in this answer and never again') })
  .meta({ id: 'CreatedApiKey' })
