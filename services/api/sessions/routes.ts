import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { AppError, notFound } from '../../shared/errors.ts'
import { filterNode as documentedFilter } from '../../shared/filters/schema.ts'
import { atCallerOffset, fromClickHouseTime, TIME_RANGE } from '../../shared/timestamp.ts'
import { principalOf } from '../http/auth.ts'
import { type CursorKey, cursorAfter, cursorInput, decodeCursor } from '../http/cursor.ts'
import { envelope, ok, pageEnvelope, responses } from '../http/envelope.ts'
import { timeWindow } from '../http/inputs.ts'
import { documentedAs } from '../http/openapi.ts'
import { type PageBounds, pageFields, pageOf } from '../http/paging.ts'
import type { QueryGate } from '../http/query-gate.ts'
import { requestRecord } from '../requests/interface.ts'
import {
  buildTree,
  DETAIL_FIELDS,
  SESSION_DETAIL_LIMIT,
  type SessionDetailRepo,
  type TreeNode,
} from './detail.ts'
import type { SessionRepo, SessionRow } from './repo.ts'
import { type SessionQuery, SORT_FIELDS, type SortField } from './sql.ts'

const unixMs = z
  .number('must be Unix milliseconds (a number)')
  .int('must be a whole number of milliseconds')
  .min(TIME_RANGE.minMs, `must be on or after ${TIME_RANGE.first}`)
  .max(TIME_RANGE.maxMs, `must be on or before ${TIME_RANGE.last}`)

/** Spec: limit 50 unless asked, at most 1000. */
const SESSION_PAGES: PageBounds = { defaultLimit: 50, maxLimit: 1000, maxOffset: 1_000_000_000 }

const direction = z.enum(['asc', 'desc'], 'must be "asc" or "desc"')

const filterNode = z
  .union([z.literal('all'), z.record(z.string(), z.unknown())], {
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be "all" or a filter node object'),
  })
  .describe('A filter node (docs/sessions.md): "all", a leaf, or {left, operator, right}')

export const sessionQueryBody = z.strictObject({
  search: z
    .string('must be a string')
    .max(1000, 'must be at most 1000 characters')
    .optional()
    .describe('Case-insensitive substring of the session id or name'),
  timeFilter: timeWindow(unixMs),
  nameEquals: z.string('must be a string').max(1000, 'must be at most 1000 characters').optional(),
  timezoneDifference: z
    .number('must be a number of minutes')
    .int('must be a whole number of minutes')
    .min(-840, 'must be between -840 and 840 (UTC+14:00 to UTC−14:00)')
    .max(840, 'must be between -840 and 840 (UTC+14:00 to UTC−14:00)')
    .describe(
      'Minutes, JavaScript getTimezoneOffset() convention (UTC+2 is -120); offsets that exist, ±14:00',
    ),
  filter: filterNode,
  ...pageFields(SESSION_PAGES, false),
  sort: z
    .strictObject(
      Object.fromEntries(SORT_FIELDS.map((field) => [field, direction.optional()])) as Record<
        SortField,
        z.ZodOptional<typeof direction>
      >,
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys'
            ? `can only sort by ${SORT_FIELDS.join(', ')}`
            : 'must be an object',
      },
    )
    .refine((sort) => Object.keys(sort).length === 1, 'must name exactly one field')
    .optional()
    .describe('One field: asc or desc; default {created_at: "desc"}; ties broken by session_id'),
  cursor: cursorInput
    .optional()
    .describe('The next_cursor of the previous page (same sort); offset must then be 0 or left out'),
})

// The filter is validated as "all" or an object, then compiled; the document shows its grammar.
documentedAs(sessionQueryBody, sessionQueryBody.extend({ filter: documentedFilter }))

type QueryBody = z.infer<typeof sessionQueryBody>

const session = z
  .object({
    session_id: z.string(),
    session_name: z.string(),
    created_at: z.string().describe('First request in the window, ISO 8601 at the caller offset'),
    latest_request_created_at: z
      .string()
      .describe('Last request in the window, ISO 8601 at the caller offset'),
    total_cost: z.number().describe('USD'),
    total_requests: z.number().int(),
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int().describe('prompt_tokens plus completion_tokens'),
    avg_latency: z.number().describe('Milliseconds'),
    user_ids: z.array(z.string()).describe('Unique, non-empty'),
  })
  .meta({ id: 'Session' })

const sortOf = (body: QueryBody) =>
  (Object.entries(body.sort ?? { created_at: 'desc' })[0] ?? ['created_at', 'desc']) as [
    SortField,
    'asc' | 'desc',
  ]

const TIME_SORTS: readonly SortField[] = ['created_at', 'latest_request_created_at']

/** What a cursor's value must be for a sort: Unix milliseconds for times, else the aggregate. */
const cursorValue = (field: SortField) =>
  TIME_SORTS.includes(field)
    ? z.number().int().min(TIME_RANGE.minMs).max(TIME_RANGE.maxMs)
    : field === 'total_requests'
      ? z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)
      : z.number()

/** Where a page of sessions ended: its last session's sort value and id. */
function keyOf(field: SortField, row: SessionRow): CursorKey {
  const value = {
    created_at: () => fromClickHouseTime(row.session_created_at).getTime(),
    latest_request_created_at: () => fromClickHouseTime(row.session_latest_request_created_at).getTime(),
    total_cost: () => row.session_total_cost,
    total_requests: () => row.session_total_requests,
    avg_latency: () => row.session_avg_latency,
  }[field]()
  return [value, row.session_id]
}

export function toQuery(organizationId: string, body: QueryBody): SessionQuery {
  const [field, dir] = sortOf(body)
  const { offset, limit } = pageOf(body, 'body', { cursor: body.cursor, maxOffset: SESSION_PAGES.maxOffset })
  let after: CursorKey | undefined
  if (body.cursor !== undefined) {
    after = decodeCursor(body.cursor, {
      organizationId,
      sort: `${field}:${dir}`,
      value: cursorValue(field),
      id: z.string(),
      path: 'body.cursor',
    })
  }
  return {
    organizationId,
    startMs: body.timeFilter.startTimeUnixMs,
    endMs: body.timeFilter.endTimeUnixMs,
    search: body.search || undefined,
    nameEquals: body.nameEquals,
    filter: body.filter,
    sort: { field, direction: dir },
    offset,
    limit,
    ...(after ? { after: after as [number, string] } : {}),
  }
}

function toSession(row: SessionRow, timezoneDifference: number): z.infer<typeof session> {
  return {
    session_id: row.session_id,
    session_name: row.latest_session_name,
    created_at: atCallerOffset(row.session_created_at, timezoneDifference),
    latest_request_created_at: atCallerOffset(row.session_latest_request_created_at, timezoneDifference),
    total_cost: row.session_total_cost,
    total_requests: row.session_total_requests,
    prompt_tokens: row.session_prompt_tokens,
    completion_tokens: row.session_completion_tokens,
    total_tokens: row.session_total_tokens,
    avg_latency: row.session_avg_latency,
    user_ids: [...row.user_ids].sort(),
  }
}

// The request record's own fields (requests/record.ts), as GET /v1/request/:id shows them; the
// session's name is the detail's, not repeated per request.
const {
  request_id,
  session_name: _,
  ...listed
} = requestRecord.pick(
  Object.fromEntries(DETAIL_FIELDS.map((field) => [field, true])) as {
    [F in (typeof DETAIL_FIELDS)[number]]: true
  },
).shape

const sessionRequest = z
  .object({
    request_id,
    parent_request_id: z
      .uuid()
      .nullable()
      .describe(
        'The request of the parent span (same trace), else of the nearest session_path prefix; null for a root',
      ),
    depth: z.number().int().describe('0 for a root'),
    ...listed,
  })
  .meta({ id: 'SessionRequest' })

const sessionDetail = z
  .object({
    session_id: z.string(),
    session_name: z.string().describe("The latest request's session name"),
    total_requests: z.number().int().describe('Every request of the session, listed or not'),
    total_cost: z.number().describe('USD, over every request of the session'),
    total_tokens: z
      .number()
      .int()
      .describe(
        'prompt_tokens plus completion_tokens over every request, as POST /v1/session/query counts them',
      ),
    truncated: z
      .boolean()
      .describe(`More than ${SESSION_DETAIL_LIMIT} requests: only the first ones are listed`),
    requests: z.array(sessionRequest).describe('In time order; each after its parent'),
  })
  .meta({ id: 'SessionDetail' })

const POST_ONLY = new Set(['query', 'count'])

const sessionIdParams = z.object({
  id: z.string().min(1, 'must not be empty').describe('The session id (at most 100 characters in a path)'),
})

export function sessionRoutes(
  repo: SessionRepo,
  gate: QueryGate,
  detail: SessionDetailRepo,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/v1/session/:id', {
      schema: {
        tags: ['sessions'],
        operationId: 'getSession',
        summary: "One session's requests in time order, with their tree, tokens, cost and latency",
        params: sessionIdParams,
        response: responses({ 200: envelope(sessionDetail) }, { query: true, refuses: [404, 405] }),
      },
      handler: async (request, reply) => {
        const { organizationId } = principalOf(request)
        // /v1/session/query and /count exist for POST only: a GET of them is a wrong method.
        if (POST_ONLY.has(request.params.id)) {
          reply.header('allow', 'POST')
          throw new AppError(
            405,
            'method_not_allowed',
            `Method GET is not allowed on /v1/session/${request.params.id}; allowed: POST`,
          )
        }
        return gate.run(organizationId, async () => {
          const found = await detail(organizationId, request.params.id)
          if (!found) throw notFound('Session not found')
          const { totals } = found
          const rows = found.rows.slice(0, SESSION_DETAIL_LIMIT)
          const tree = buildTree(rows)
          const requests = rows.map((row, i) => ({
            ...row,
            ...(tree[i] as TreeNode),
          }))
          return ok({
            session_id: request.params.id,
            session_name: totals.latest_session_name,
            total_requests: totals.session_total_requests,
            total_cost: totals.session_total_cost,
            total_tokens: totals.session_total_tokens,
            truncated: found.rows.length > SESSION_DETAIL_LIMIT,
            requests,
          })
        })
      },
    })

    app.post('/v1/session/query', {
      schema: {
        tags: ['sessions'],
        operationId: 'querySessions',
        summary: 'Search sessions: requests in the window that pass the filter, grouped by session',
        description:
          'Pages by `offset` or, for deep paging, by `cursor`: every answer carries `next_cursor`, the position after its last session (docs/sessions.md).',
        body: sessionQueryBody,
        response: responses({ 200: pageEnvelope(z.array(session)) }, { body: true, query: true }),
      },
      handler: async (request) => {
        const query = toQuery(principalOf(request).organizationId, request.body)
        const [field, dir] = sortOf(request.body)
        return gate.run(query.organizationId, async () => {
          const page = await repo.page(query)
          const next = cursorAfter(query.organizationId, `${field}:${dir}`, page, query.limit, (row) =>
            keyOf(field, row),
          )
          return {
            ...ok(page.map((row) => toSession(row, request.body.timezoneDifference))),
            next_cursor: next,
          }
        })
      },
    })

    app.post('/v1/session/count', {
      schema: {
        tags: ['sessions'],
        operationId: 'countSessions',
        summary: 'How many sessions the same body pages through (offset, limit and sort are ignored)',
        body: sessionQueryBody,
        response: responses(
          { 200: envelope(z.object({ count: z.number().int() })) },
          { body: true, query: true },
        ),
      },
      handler: async (request) => {
        const query = toQuery(principalOf(request).organizationId, request.body)
        return gate.run(query.organizationId, async () => ok({ count: await repo.count(query) }))
      },
    })
  }
}
