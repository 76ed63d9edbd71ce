import { z } from 'zod'

/** Offset pagination (spec 4.5): `offset` records skipped, `limit` per page; the next page is offset + limit. */
export const pageParams = {
  offset: z.coerce
    .number('must be a number')
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .default(0),
  limit: z.coerce
    .number('must be a number')
    .int('must be an integer')
    .min(1, 'must be between 1 and 100')
    .max(100, 'must be between 1 and 100')
    .default(10),
}

export type Page = { offset: number; limit: number }
