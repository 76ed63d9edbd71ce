import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { badRequest } from '../../shared/errors.ts'

// One rule for every value a caller sends, whatever the route and wherever it is stored:
// text is well-formed Unicode without NUL (Postgres refuses NUL in text and jsonb, and a lone
// surrogate cannot be encoded as UTF-8), numbers are finite (a JSON literal such as 1e400 parses
// to Infinity), and JSON nests at most MAX_JSON_DEPTH levels (deeper values cannot be stored or
// re-serialised without recursion limits). Routes validate their own fields on top of this.

const MAX_JSON_DEPTH = 100

/** Why `text` breaks the text rule, or undefined. */
function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000)'
  if (!text.isWellFormed()) return 'must not contain unpaired UTF-16 surrogates'
  return undefined
}

/** The first value in `value` that breaks the rules, as "path: rule"; undefined when all hold. */
export function inputProblem(value: unknown, root: string): string | undefined {
  const found = problemIn(value, 0)
  return found && `${[root, ...found.path].join('.')}: ${found.rule}`
}

/**
 * Where the rules break first in `value`: the keys leading there and the rule. The path is built
 * only on the way back from a failure, so a value that passes costs no strings. Recursion stops
 * at MAX_JSON_DEPTH, so it never holds more frames than that, however deep the input.
 */
function problemIn(value: unknown, depth: number): { path: string[]; rule: string } | undefined {
  if (typeof value === 'string') {
    const rule = textProblem(value)
    return rule ? { path: [], rule } : undefined
  }
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : { path: [], rule: 'must be a finite number' }
  if (value === null || typeof value !== 'object') return undefined
  if (depth >= MAX_JSON_DEPTH) return { path: [], rule: `is nested deeper than ${MAX_JSON_DEPTH} levels` }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = problemIn(value[i], depth + 1)
      if (found) {
        found.path.unshift(String(i))
        return found
      }
    }
    return undefined
  }
  for (const key of Object.keys(value)) {
    const keyRule = textProblem(key)
    if (keyRule) return { path: [], rule: `key ${JSON.stringify(key)} ${keyRule}` }
    const found = problemIn((value as Record<string, unknown>)[key], depth + 1)
    if (found) {
      found.path.unshift(key)
      return found
    }
  }
  return undefined
}

/**
 * Installs the rule: JSON bodies are parsed by fastify's parser (prototype-poisoning checks
 * kept) and then checked; path parameters and the query string are checked before validation.
 * An empty body with Content-Type: application/json is no body (clients send the header on
 * body-less DELETEs and POSTs).
 */
export function installInputRules(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString()
    if (text === '') return done(null, undefined)
    parseJson(request, text, (err, parsed) => {
      if (err) return done(err, undefined)
      const problem = inputProblem(parsed, 'body')
      if (problem) return done(badRequest(problem), undefined)
      done(null, parsed)
    })
  })
  app.addHook('preValidation', async (request) => {
    const problem = inputProblem(request.params, 'params') ?? inputProblem(request.query, 'query')
    if (problem) throw badRequest(problem)
  })
}

/** A UUID as callers send it, in any letter case; stored and compared in lower case. */
export const uuidInput = z.uuid('must be a UUID').overwrite((id) => id.toLowerCase())

/**
 * A whole number from `min` to `max`. zod's int() also refuses whole numbers past 2^53 (1e20):
 * those are out of range, and the caller reads the bound they pass, not "not a whole number".
 */
export function wholeNumber(min: number, max: number) {
  const tooSmall = `must be at least ${min}`
  const tooBig = `must be at most ${max}`
  return z
    .number()
    .int({
      error: (issue) =>
        Number.isInteger(issue.input)
          ? (issue.input as number) < min
            ? tooSmall
            : tooBig
          : 'must be a whole number',
    })
    .min(min, tooSmall)
    .max(max, tooBig)
}

/**
 * A time window `{startTimeUnixMs, endTimeUnixMs}` of request creation times, each end read by
 * `unixMs` (its own bounds), the end after the start.
 */
export function timeWindow(unixMs: z.ZodNumber) {
  return z
    .object(
      { startTimeUnixMs: unixMs, endTimeUnixMs: unixMs },
      { error: (issue) => (issue.input === undefined ? 'is required' : 'must be an object') },
    )
    .refine((t) => t.endTimeUnixMs > t.startTimeUnixMs, {
      message: 'must be after startTimeUnixMs',
      path: ['endTimeUnixMs'],
    })
    .describe('Requests with startTimeUnixMs <= created_at < endTimeUnixMs')
}
