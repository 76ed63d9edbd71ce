import { z } from 'zod'

/**
 * A grade or a property given after the fact, as it travels on the event topic beside the
 * request events: a score (upserted, or deleted with `deleted`) or a custom property of a request.
 * The wire format is schemas/events/annotation-event.avsc; scores land in the `scores` table,
 * properties in `request_property_updates` (schemas/clickhouse/0005_scores.sql). Never a rewrite
 * of a request's row: the two are merged where they are read.
 */
export const annotationEventSchema = z.object({
  organization_id: z.uuid(),
  kind: z.enum(['score', 'property']),
  score_id: z.union([z.uuid(), z.literal('')]),
  target_kind: z.enum(['request', 'session']),
  request_id: z.union([z.uuid(), z.literal('')]),
  session_id: z.string(),
  name: z.string(),
  data_type: z.enum(['numeric', 'boolean', 'categorical', 'text']),
  value: z.number(),
  string_value: z.string(),
  source: z.string(),
  comment: z.string(),
  created_at: z.date(),
  version: z.number().int(),
  deleted: z.boolean(),
})

export type AnnotationEvent = z.infer<typeof annotationEventSchema>
