import { z } from 'zod'
import { requestEventShape } from '../clickhouse/request-table.ts'

/**
 * A processed model request as it travels on the event topic: one field per column of
 * request_response_rmt that the ingest writes (services/shared/clickhouse/request-table.ts). The
 * wire format is the Avro schema schemas/events/request-event.avsc; this is the in-memory shape,
 * checked on both ends (a test keeps the two field lists identical).
 */
export const requestEventSchema = z.object(requestEventShape)

export type RequestEvent = z.infer<typeof requestEventSchema>

/** Bodies travel as JSON text; one that is not JSON is read as a string, an empty one as null. */
export function parseEventBody(text: string): unknown {
  if (text === '') return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * About how many bytes an event takes in a write (its bodies, where the size is, and a little
 * for the other fields): what bounds the size of a batch, not an exact count.
 */
export function approximateSize(event: RequestEvent): number {
  let size = 512 + event.request_body.length + event.response_body.length
  for (const [k, v] of Object.entries(event.properties)) size += k.length + v.length
  return size
}
