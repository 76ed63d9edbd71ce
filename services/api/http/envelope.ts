import { z } from 'zod'
import { nextCursor } from './cursor.ts'

/** The success envelope of spec 2.1 around a payload schema. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.object({ data, error: z.null() })
}

/** A page of a keyset-paged list: the envelope with next_cursor beside data. */
export function pageEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ data, error: z.null(), next_cursor: nextCursor })
}

export const errorEnvelope = z
  .object({
    data: z.null(),
    error: z.string().describe('What went wrong; for 4xx it names the field and the rule'),
  })
  .meta({ id: 'ErrorEnvelope', description: 'Failure' })

/**
 * Response schemas every authenticated route may answer with, for the OpenAPI document: a
 * parameter, query or body breaking a rule (400), no valid key (401), the key's rate limit (429)
 * and a server error (500).
 */
const errorResponses = {
  400: errorEnvelope,
  401: errorEnvelope,
  429: errorEnvelope,
  500: errorEnvelope,
  503: errorEnvelope.describe(
    'Unavailable for now (the process is shutting down, a dependency is down); retry',
  ),
} as const

/** What a route with a JSON body may also answer: the body is too large (413) or not JSON (415). */
const bodyErrorResponses = { 413: errorEnvelope, 415: errorEnvelope } as const

/** Routes that query ClickHouse for the caller may also exceed a query limit (docs/requests.md). */
const queryErrorResponses = { 422: errorEnvelope } as const

/** What a route without an API key may answer: a parameter or query breaking a rule, a server error. */
export const publicErrorResponses = { 400: errorEnvelope, 500: errorEnvelope } as const

/** A refusal of a route's own: forbidden (403), not found (404), not allowed (405), a conflict (409). */
type Refusal = 403 | 404 | 405 | 409

/** What else an authenticated route may answer, besides what every one may (errorResponses). */
interface Also {
  /** It takes a JSON body (413, 415). */
  body?: true
  /** It queries ClickHouse for the caller (422). */
  query?: true
  /** Its own refusals. */
  refuses?: readonly Refusal[]
}

type ErrorsOf<A extends Also> = typeof errorResponses &
  (A['body'] extends true ? typeof bodyErrorResponses : unknown) &
  (A['query'] extends true ? typeof queryErrorResponses : unknown) & {
    [S in NonNullable<A['refuses']>[number]]: typeof errorEnvelope
  }

/**
 * The response schemas of an authenticated route, for the OpenAPI document: its answers (say
 * `{ 200: envelope(x) }`), what every such route may answer, and what `also` adds to that.
 */
export function responses<Answers extends object, const A extends Also = Record<never, never>>(
  answers: Answers,
  also?: A,
): Answers & ErrorsOf<A> {
  const refusals = Object.fromEntries((also?.refuses ?? []).map((status) => [status, errorEnvelope]))
  return {
    ...answers,
    ...errorResponses,
    ...(also?.body ? bodyErrorResponses : {}),
    ...(also?.query ? queryErrorResponses : {}),
    ...refusals,
  } as Answers & ErrorsOf<A>
}

export const ok = <T>(data: T) => ({ data, error: null })

// Declared in shared: the export manifest, which the exporter writes, is a wire schema too.
export { isoTimestamp } from '../../shared/timestamp.ts'
