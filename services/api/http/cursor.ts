import { z } from 'zod'
import { badRequest } from '../../shared/errors.ts'
import type { Sql } from '../../shared/postgres.ts'

/**
 * Keyset cursors: where a page ended (the sort key and the tie-breaking id of its last row), as
 * base64url JSON. A cursor is bound to the organization and the sort it was made for and checked
 * field by field when it comes back: another organization's cursor, one for another sort, or one
 * whose fields are not what that sort's key holds is a 400 naming `cursor`. A cursor only says
 * where to start reading: the query still names the caller's organization and filter itself, so
 * an edited position can at most skip the caller's own rows.
 */

const MAX_CURSOR_LENGTH = 100_000

export const cursorInput = z
  .string('must be a string (a next_cursor of an earlier answer)')
  .min(1, 'must not be empty')
  .max(MAX_CURSOR_LENGTH, `must be at most ${MAX_CURSOR_LENGTH} characters`)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor of an earlier answer, unchanged')
  .describe('The next_cursor of the previous page: the page after it, by the same sort')

export const nextCursor = z
  .string()
  .nullable()
  .describe(
    'Pass as cursor (with the same sort) for the next page; null when this page has fewer rows than limit (a full last page is followed by an empty one)',
  )

const wire = z.strictObject({
  v: z.literal(1),
  org: z.string(),
  sort: z.string(),
  after: z.tuple([z.union([z.string(), z.number(), z.null()]), z.string()]),
})

/** The key a page ended at: the sort field's value and the row's id (ties). */
export type CursorKey = [value: string | number | null, id: string]

export function encodeCursor(organizationId: string, sort: string, after: CursorKey): string {
  return Buffer.from(JSON.stringify({ v: 1, org: organizationId, sort, after }), 'utf8').toString('base64url')
}

/**
 * The cursor after a page: its last row's key when the page is full (more rows may follow), else
 * null. Reading one row more to know would make a page of exactly max_result_rows rows exceed it.
 */
export function cursorAfter<T>(
  organizationId: string,
  sort: string,
  page: T[],
  limit: number,
  keyOf: (row: T) => CursorKey,
): string | null {
  const last = page[page.length - 1]
  return page.length === limit && last !== undefined ? encodeCursor(organizationId, sort, keyOf(last)) : null
}

/**
 * The key a cursor holds, once it is known to be this organization's for this sort and its value
 * passes `value` (the sort field's type); otherwise a 400 naming `path`.
 */
export function decodeCursor<V extends z.ZodType>(
  text: string,
  expected: { organizationId: string; sort: string; value: V; id: z.ZodType<string>; path: string },
): [z.output<V>, string] {
  const invalid = (why: string) => badRequest(`${expected.path}: ${why}`)
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    throw invalid('is not a cursor this API made (pass next_cursor unchanged)')
  }
  const cursor = wire.safeParse(parsed)
  if (!cursor.success) throw invalid('is not a cursor this API made (pass next_cursor unchanged)')
  if (cursor.data.org !== expected.organizationId) throw invalid("is another organization's cursor")
  if (cursor.data.sort !== expected.sort) {
    throw invalid(`was made for sort ${cursor.data.sort}, not ${expected.sort}; keep the sort while paging`)
  }
  const value = expected.value.safeParse(cursor.data.after[0])
  const id = expected.id.safeParse(cursor.data.after[1])
  if (!value.success || !id.success) throw invalid('holds a position this sort cannot have')
  return [value.data, id.data]
}

/** A row's place in a Postgres list ordered newest first: created_at as Postgres text, and id. */
export interface PagePosition {
  createdAt: string
  id: string
}

/** A page of a Postgres list newest first: past `offset` rows or after `after`; `status` narrows it. */
export interface PostgresPage<Status extends string> {
  offset: number
  limit: number
  status?: Status | undefined
  after?: PagePosition | undefined
}

/**
 * What follows a newest-first list's own conditions (`where organization_id = …`): the status the
 * page asks for, the rows after its position, the order (created_at, then id) and the page.
 */
export function newestFirst(sql: Sql, page: PostgresPage<string>) {
  const { status, after } = page
  return sql`${status ? sql`and status = ${status}` : sql``}
    ${after ? sql`and (created_at < ${after.createdAt}::timestamptz or (created_at = ${after.createdAt}::timestamptz and id > ${after.id}))` : sql``}
    order by created_at desc, id
    offset ${page.offset} limit ${page.limit}`
}

/** Postgres timestamptz text (`2026-11-26 04:45:12.123456+00`): exact to the microsecond. */
const postgresTime = z.string().regex(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d){0,2}$/)

/**
 * Cursor paging of a Postgres list (newest first, then id): the position to read after, or a 400
 * naming `path`; and the page with its next cursor (after a full page).
 */
export function postgresPaging(organizationId: string, list: string, path: string) {
  const sort = `${list}:created_at:desc`
  return {
    after(cursor: string | undefined): PagePosition | undefined {
      if (cursor === undefined) return undefined
      const [createdAt, id] = decodeCursor(cursor, {
        organizationId,
        sort,
        value: postgresTime,
        id: z.uuid(),
        path,
      })
      return { createdAt, id }
    },
    page<T>(page: { record: T; position: PagePosition }[], limit: number) {
      const next = cursorAfter(organizationId, sort, page, limit, (r) => [
        r.position.createdAt,
        r.position.id,
      ])
      return { data: page.map((r) => r.record), error: null, next_cursor: next }
    },
  }
}
