import { z } from 'zod'
import { propertyFilterSchema } from './payload.ts'

/**
 * A row of `webhooks` as postgres returns it: the API and the dispatcher each read the columns
 * they need of this one definition.
 */
export const webhookRowSchema = z.object({
  id: z.string(),
  organization_id: z.string(),
  destination: z.string(),
  sample_rate: z.number(),
  property_filters: z.array(propertyFilterSchema),
  /** The `config.filter` tree as the caller wrote it; null when none. */
  filter_tree: z.unknown(),
  include_data: z.boolean(),
  /**
   * The events it subscribes to (`config.events`, 0010). Read as text: an event a later Tally
   * added is one this version never sends, not a row it cannot read.
   */
  events: z.array(z.string()),
  state: z.enum(['active', 'disabled']),
  disabled_reason: z.string().nullable(),
  hmac_key: z.string(),
  previous_hmac_key: z.string().nullable(),
  previous_key_expires_at: z.date().nullable(),
  created_at: z.date(),
})
