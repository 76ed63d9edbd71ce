import { z } from 'zod'

/** A timestamp: a Date in code, an ISO 8601 string on the wire (the API's answers, stored JSON). */
export const isoTimestamp = z.codec(z.iso.datetime({ offset: true }), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
})
