import { z } from 'zod'
import { badRequest } from '../../shared/errors.ts'

/**
 * Paging. Tally's one scheme is offset pagination: `offset` records skipped, `limit` per page;
 * the next page is offset + limit (or, where a list offers it, the answer's next_cursor).
 * `page` (0-indexed) and `pageSize` — the prompt query's scheme — are accepted everywhere as an
 * alias: offset = page × pageSize, and pageSize takes the place of limit. With the alias, offset
 * must be 0 or left out. The prompt query keeps page/pageSize and takes offset/limit the same way
 * (docs/api.md).
 */
export interface PageBounds {
  defaultLimit: number
  maxLimit: number
  maxOffset: number
}

/** Lists in the query string of a GET: up to 100 per page, 10 unless asked. */
const LIST: PageBounds = { defaultLimit: 10, maxLimit: 100, maxOffset: Number.MAX_SAFE_INTEGER }

const whole = (coerce: boolean) =>
  (coerce ? z.coerce.number('must be a number') : z.number('must be a number')).int('must be an integer')

const limitRule = (b: PageBounds) => `must be between 1 and ${b.maxLimit}`

/** The four fields of both schemes; `coerce` for a query string, where every value is text. */
export function pageFields(b: PageBounds, coerce: boolean) {
  return {
    offset: whole(coerce)
      .min(0, 'must be at least 0')
      .max(b.maxOffset, `must be at most ${b.maxOffset}`)
      .default(0)
      .describe('Records skipped'),
    limit: whole(coerce)
      .min(1, limitRule(b))
      .max(b.maxLimit, limitRule(b))
      .default(b.defaultLimit)
      .describe('Records per page'),
    page: whole(coerce)
      .min(0, 'must be at least 0')
      .optional()
      .describe('Alias: the page, 0-indexed (offset = page × pageSize); offset must then be 0 or left out'),
    pageSize: whole(coerce)
      .min(1, limitRule(b))
      .max(b.maxLimit, limitRule(b))
      .optional()
      .describe('Alias of limit, used with page'),
  }
}

/** offset, limit, page and pageSize of a list in a query string. */
export const pageParams = pageFields(LIST, true)

export type Page = { offset: number; limit: number }

/** What a caller sent of the two schemes, after the schema's defaults. */
interface GivenPage {
  offset: number
  limit: number
  page?: number | undefined
  pageSize?: number | undefined
}

/**
 * The page a caller asked for, by either scheme; `where` is `body` or `querystring` for the
 * messages. With a cursor (which says where the page starts), the start must be 0 or left out.
 */
export function pageOf(
  given: GivenPage,
  where: 'body' | 'querystring',
  options: { cursor?: unknown; maxOffset?: number } = {},
): Page {
  const alias = given.page !== undefined || given.pageSize !== undefined
  if (alias && given.offset !== 0) {
    throw badRequest(`${where}.offset: must be 0 or left out with page and pageSize`)
  }
  const limit = given.pageSize ?? given.limit
  const offset = alias ? (given.page ?? 0) * limit : given.offset
  const maxOffset = options.maxOffset ?? Number.MAX_SAFE_INTEGER
  if (offset > maxOffset) throw badRequest(`${where}.page: page × pageSize must be at most ${maxOffset}`)
  if (options.cursor !== undefined && offset !== 0) {
    const name = given.page === undefined ? 'offset' : 'page'
    throw badRequest(`${where}.${name}: must be 0 or left out with cursor`)
  }
  return { offset, limit }
}
