import { z } from 'zod'

/** The success envelope of spec 2.1 around a payload schema. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.object({ data, error: z.null() })
}

export const errorEnvelope = z
  .object({
    data: z.null(),
    error: z.string().describe('What went wrong; for 4xx it names the field and the rule'),
  })
  .describe('Failure')

/** Response schemas every authenticated route may answer with, for the OpenAPI document. */
export const errorResponses = {
  400: errorEnvelope,
  401: errorEnvelope,
  404: errorEnvelope,
  429: errorEnvelope,
  500: errorEnvelope,
  503: errorEnvelope.describe(
    'Unavailable for now (the process is shutting down, a dependency is down); retry',
  ),
} as const

/** Routes that query ClickHouse for the caller may also exceed a query limit (docs/requests.md). */
export const queryErrorResponses = {
  ...errorResponses,
  422: errorEnvelope.describe('The query exceeded a query limit; the message names it and its value'),
} as const

export const ok = <T>(data: T) => ({ data, error: null })

/** A timestamp: a Date in handlers, an ISO 8601 string on the wire. */
export const isoTimestamp = z.codec(z.iso.datetime({ offset: true }), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
})
