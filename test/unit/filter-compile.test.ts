import { describe, expect, it } from 'vitest'
import { AppError } from '../../services/shared/errors.ts'
import {
  compileRequestFilter,
  compileSessionFilter,
  MAX_DEPTH,
  MAX_LEAVES,
  MAX_PATTERN_UNDERSCORES,
} from '../../services/shared/filters/compile.ts'
import { OPERATORS, REQUEST_FIELDS } from '../../services/shared/filters/fields.ts'

const leaf = (field: string, op: string, value: unknown) => ({
  request_response_rmt: { [field]: { [op]: value } },
})
const and = (left: unknown, right: unknown) => ({ left, operator: 'and', right })
const or = (left: unknown, right: unknown) => ({ left, operator: 'or', right })

/** The 400 a filter compiles to, or a failure naming what compiled instead. */
function refusal(compile: () => unknown): { status: number; message: string } {
  try {
    compile()
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, message: err.message }
    throw err
  }
  throw new Error('the filter compiled')
}

// Text no caller value may leave in the SQL: quotes, comments, statement ends, keywords.
const HOSTILE = [
  "x' OR 1=1 --",
  'a"; DROP TABLE request_response_rmt; --',
  '\\\\',
  '{x:String}',
  '/* */',
  '`',
]

describe('the filter compiler (no engine)', () => {
  it('compiles "all" and {} to true, with no parameters', () => {
    expect(compileRequestFilter('all')).toEqual({ sql: 'true', params: {}, columns: new Set() })
    expect(compileRequestFilter({})).toEqual({ sql: 'true', params: {}, columns: new Set() })
    expect(compileSessionFilter('all')).toEqual({ where: 'true', having: 'true', scoreJoin: '', params: {} })
  })

  it('binds every value as a typed placeholder', () => {
    expect(compileRequestFilter(leaf('model', 'equals', 'gpt-4o'))).toEqual({
      sql: 'model = {f0:String}',
      params: { f0: 'gpt-4o' },
      columns: new Set(['model']),
    })
    expect(compileRequestFilter(and(leaf('latency', 'gt', 250), leaf('cached', 'equals', true)))).toEqual({
      sql: '(latency > {f0:Float64} AND cached = {f1:Bool})',
      params: { f0: '250', f1: true },
      columns: new Set(['latency', 'cached']),
    })
    expect(compileRequestFilter(leaf('created_at', 'gte', '2026-11-01T00:00:00+01:00'))).toEqual({
      sql: "request_created_at >= fromUnixTimestamp64Milli({f0:Int64}, 'UTC')",
      params: { f0: Date.UTC(2026, 9, 31, 23) },
      columns: new Set(['request_created_at']),
    })
    // A property as it is now: its latest value set after the fact, else the logged one.
    expect(compileRequestFilter({ properties: { env: { equals: 'prod' } } }, { prefix: 'w' })).toEqual({
      sql:
        '(request_id IN (SELECT request_id FROM request_property_updates FINAL WHERE organization_id = {org:UUID} AND key = {w0:String} AND value = {w1:String})' +
        ' OR (properties[{w0:String}] = {w2:String} AND request_id NOT IN (SELECT request_id FROM request_property_updates FINAL WHERE organization_id = {org:UUID} AND key = {w0:String})))',
      params: { w0: 'env', w1: 'prod', w2: 'prod' },
      columns: new Set(['properties']),
    })
  })

  it('never puts caller text in the SQL, whatever the field, operator or property name', () => {
    for (const [name, field] of REQUEST_FIELDS) {
      if (field.type !== 'text' || field.uuid) continue
      for (const op of OPERATORS.text) {
        for (const value of HOSTILE) {
          const { sql, params } = compileRequestFilter(
            or(leaf(name, op, value), { properties: { [value]: { [op]: value } } }),
          )
          expect(sql).not.toContain(value)
          expect(Object.values(params)).toContain(value)
          // Outside placeholders, only identifiers, operators and fixed words remain.
          expect(sql.replace(/\{(f\d+|org):[A-Za-z0-9]+\}/g, '?')).toMatch(/^[\w\s()[\]=!<>?,.]+$/)
        }
      }
    }
  })

  it('splits a session filter into WHERE and HAVING, and refuses "or" across them', () => {
    const session = { sessions_request_response_rmt: { session_total_cost: { gt: 1 } } }
    expect(compileSessionFilter(and(leaf('model', 'equals', 'm'), session))).toEqual({
      where: 'model = {f0:String}',
      having: 'session_total_cost > {f1:Float64}',
      scoreJoin: '',
      params: { f0: 'm', f1: '1' },
    })
    expect(refusal(() => compileSessionFilter(or(leaf('model', 'equals', 'm'), session))).message).toMatch(
      /^body\.filter: "or" cannot combine session-level/,
    )
    expect(refusal(() => compileRequestFilter(session))).toEqual({
      status: 400,
      message: 'body.filter.sessions_request_response_rmt: is only available in session queries',
    })
  })

  it('refuses what it cannot compile with a 400 naming the path, and drops nothing', () => {
    const cases: [unknown, string][] = [
      [leaf('nope', 'equals', 'x'), 'body.filter.request_response_rmt.nope: unknown field; use one of'],
      [
        leaf('model', 'gt', 'x'),
        'body.filter.request_response_rmt.model.gt: unknown operator for a text field',
      ],
      [leaf('latency', 'equals', '5'), 'body.filter.request_response_rmt.latency.equals: must be a number'],
      [
        leaf('request_id', 'equals', 'not-a-uuid'),
        'body.filter.request_response_rmt.request_id.equals: must be a UUID',
      ],
      [
        leaf('created_at', 'gt', '2026-11-01T00:00:00'),
        'body.filter.request_response_rmt.created_at.gt: must be Unix milliseconds',
      ],
      [
        leaf('created_at', 'gt', Date.UTC(2300, 0, 1)),
        'body.filter.request_response_rmt.created_at.gt: must be between',
      ],
      [
        leaf('model', 'like', 'abc\\'),
        'body.filter.request_response_rmt.model.like: ends with an unfinished escape',
      ],
      [
        leaf('model', 'like', '_'.repeat(MAX_PATTERN_UNDERSCORES + 1)),
        'body.filter.request_response_rmt.model.like: holds 17 _ wildcards',
      ],
      [{ other_table: { model: { equals: 'x' } } }, 'body.filter.other_table: unknown table'],
      [{ left: 'all', operator: 'xor', right: 'all' }, 'body.filter.operator: must be "and" or "or"'],
      [{ left: 'all', operator: 'and' }, 'body.filter.right: is required in a branch'],
      [[leaf('model', 'equals', 'x')], 'body.filter: must be "all", {}, a condition'],
    ]
    for (const [filter, message] of cases) {
      const got = refusal(() => compileRequestFilter(filter))
      expect({ filter, status: got.status, starts: got.message.startsWith(message) }).toEqual({
        filter,
        status: 400,
        starts: true,
      })
    }
    expect(refusal(() => compileRequestFilter({ x: 1 }, { path: 'query.where' })).message).toMatch(
      /^query\.where\.x:/,
    )
    expect(() => compileRequestFilter('all', { prefix: 'f; DROP' })).toThrow('is not an identifier')
  })

  it('bounds depth and size', () => {
    let deep: unknown = 'all'
    for (let i = 0; i < MAX_DEPTH; i++) deep = and(deep, 'all')
    expect(refusal(() => compileRequestFilter(deep)).message).toMatch(`nests deeper than ${MAX_DEPTH} levels`)
    // A chain of MAX_LEAVES conditions hits the depth bound first: build the trees balanced.
    const balanced = (from: number, to: number): unknown =>
      from === to
        ? leaf('status', 'equals', from)
        : or(balanced(from, Math.floor((from + to) / 2)), balanced(Math.floor((from + to) / 2) + 1, to))
    expect(compileRequestFilter(balanced(1, MAX_LEAVES)).sql).toContain(`{f${MAX_LEAVES - 1}:Float64}`)
    expect(refusal(() => compileRequestFilter(balanced(0, MAX_LEAVES))).message).toMatch(
      `the filter has more than ${MAX_LEAVES} conditions`,
    )
  })
})
