import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseHandle } from '../../services/shared/clickhouse/client.ts'
import { AppError } from '../../services/shared/errors.ts'
import {
  compileRequestFilter,
  compileSessionFilter,
  MAX_DEPTH,
  MAX_FILTER_WILDCARDS,
  MAX_LEAVES,
  MAX_PATTERN_UNDERSCORES,
} from '../../services/shared/filters/compile.ts'
import { insertEvents, matchingIds, openMigratedClickHouse } from '../support/clickhouse.ts'
import { sampleEvent } from '../support/events.ts'

const org = randomUUID()
const ids = { a: randomUUID(), b: randomUUID(), c: randomUUID() }
const fixture = [
  sampleEvent({
    organization_id: org,
    request_id: ids.a,
    created_at: new Date('2026-11-01T10:00:00.000Z'),
    completed_at: new Date('2026-11-01T10:00:01.000Z'),
    model: 'gpt-4o-mini',
    provider: 'openai',
    status: 200,
    latency_ms: 1000,
    time_to_first_token_ms: 100,
    cost_usd: 0.5,
    prompt_tokens: 10,
    completion_tokens: 20,
    total_tokens: 30,
    user_id: 'alice',
    cached: false,
    prompt_id: 'p-1',
    prompt_version_id: 'v-1',
    target_url: 'https://api.openai.com/v1/chat/completions',
    request_body: '{"q":"Weather in Paris?"}',
    response_body: '{"a":"Sunny"}',
    session_id: 's-1',
    session_name: 'Trip',
    session_path: '/plan',
    properties: { env: 'prod', "it's": '100%_sure' },
  }),
  sampleEvent({
    organization_id: org,
    request_id: ids.b,
    created_at: new Date('2026-11-02T10:00:00.000Z'),
    completed_at: new Date('2026-11-02T10:00:02.000Z'),
    model: 'claude-sonnet-4',
    provider: 'anthropic',
    status: 500,
    latency_ms: 2000,
    time_to_first_token_ms: null,
    cost_usd: 1.25,
    prompt_tokens: 100,
    completion_tokens: 200,
    total_tokens: 300,
    user_id: 'bob',
    cached: true,
    prompt_id: '',
    prompt_version_id: '',
    target_url: 'https://api.anthropic.com/v1/messages',
    request_body: '{"q":"weather in ROME?"}',
    response_body: '{"a":"Rain"}',
    session_id: 's-2',
    session_name: 'Chat',
    session_path: '/',
    properties: { env: 'dev' },
  }),
  sampleEvent({
    organization_id: org,
    request_id: ids.c,
    created_at: new Date('2026-11-03T10:00:00.000Z'),
    completed_at: new Date('2026-11-03T10:00:03.000Z'),
    model: 'gpt-4o',
    provider: 'openai',
    status: 429,
    latency_ms: 3000,
    time_to_first_token_ms: 300,
    cost_usd: 0,
    prompt_tokens: 1,
    completion_tokens: 2,
    total_tokens: 3,
    user_id: '',
    cached: false,
    request_body: 'plain',
    response_body: '',
    session_id: '',
    session_name: '',
    session_path: '',
    properties: {},
  }),
]

let ch: ClickHouseHandle
beforeAll(async () => {
  ch = await openMigratedClickHouse()
  // Another organization with matching data must never leak in (the condition is ANDed outside).
  await insertEvents(ch, [...fixture, ...fixture.map((e) => ({ ...e, organization_id: randomUUID() }))])
})
afterAll(() => ch.close())

const leaf = (field: string, op: string, value: unknown) => ({
  request_response_rmt: { [field]: { [op]: value } },
})
const run = (filter: unknown) => matchingIds(ch, org, compileRequestFilter(filter))
const expectIds = async (filter: unknown, keys: (keyof typeof ids)[]) =>
  expect(await run(filter)).toEqual(keys.map((k) => ids[k]).sort())

function rejection(compile: () => unknown): string {
  try {
    compile()
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).status).toBe(400)
    return (err as AppError).message
  }
  throw new Error('expected a 400')
}

describe('text operators select the rows a reader would expect', () => {
  it.each([
    ['model', 'equals', 'gpt-4o', ['c']],
    ['model', 'not-equals', 'gpt-4o', ['a', 'b']],
    ['model', 'like', 'gpt-4o%', ['a', 'c']],
    ['model', 'like', 'GPT%', []],
    ['model', 'ilike', 'GPT%', ['a', 'c']],
    ['request_body', 'contains', 'WEATHER', ['a', 'b']],
    ['request_body', 'not-contains', 'weather', ['c']],
    ['provider', 'equals', 'anthropic', ['b']],
    ['user_id', 'equals', '', ['c']],
    ['prompt_id', 'equals', 'p-1', ['a']],
    ['prompt_version', 'equals', 'v-1', ['a']],
    ['target_url', 'contains', 'anthropic.com', ['b']],
    ['response_body', 'contains', 'sun', ['a']],
    ['session_id', 'equals', 's-2', ['b']],
    ['session_name', 'ilike', 'tr%', ['a']],
    ['session_path', 'equals', '/plan', ['a']],
  ] as const)('%s %s %j', async (field, op, value, expected) => {
    await expectIds(leaf(field, op, value), [...expected])
  })

  it('contains treats % and _ literally rather than as wildcards', async () => {
    await expectIds({ properties: { "it's": { contains: '100%_' } } }, ['a'])
    await expectIds({ properties: { "it's": { contains: '1%0' } } }, [])
    await expectIds({ properties: { "it's": { like: '100\\%\\_sure' } } }, ['a'])
    await expectIds(leaf('model', 'like', 'gpt\\\\%'), [])
  })

  it('request_id matches by UUID for equality and by text for patterns', async () => {
    await expectIds(leaf('request_id', 'equals', ids.b.toUpperCase()), ['b'])
    await expectIds(leaf('request_id', 'not-equals', ids.b), ['a', 'c'])
    await expectIds(leaf('request_id', 'like', `${ids.a.slice(0, 8)}%`), ['a'])
    expect(rejection(() => compileRequestFilter(leaf('request_id', 'equals', 'nope')))).toBe(
      'body.filter.request_response_rmt.request_id.equals: must be a UUID',
    )
  })
})

describe('number, timestamp and boolean operators', () => {
  it.each([
    ['status', 'equals', 500, ['b']],
    ['status', 'not-equals', 200, ['b', 'c']],
    ['latency', 'gt', 2000, ['c']],
    ['latency', 'gte', 2000, ['b', 'c']],
    ['latency', 'lt', 2000, ['a']],
    ['latency', 'lte', 2000, ['a', 'b']],
    ['cost', 'gt', 0.4999, ['a', 'b']],
    ['cost', 'equals', 1.25, ['b']],
    ['prompt_tokens', 'gte', 10, ['a', 'b']],
    ['completion_tokens', 'lt', 20, ['c']],
    ['total_tokens', 'equals', 300, ['b']],
    // A request without a time to first token matches no condition on it.
    ['time_to_first_token', 'lt', 1000, ['a', 'c']],
    ['time_to_first_token', 'not-equals', 100, ['c']],
  ] as const)('%s %s %j', async (field, op, value, expected) => {
    await expectIds(leaf(field, op, value), [...expected])
  })

  it.each([
    ['created_at', 'equals', '2026-11-02T10:00:00Z', ['b']],
    ['created_at', 'gt', '2026-11-02T10:00:00.000Z', ['c']],
    ['created_at', 'gte', '2026-11-02T12:00:00+02:00', ['b', 'c']],
    ['request_created_at', 'lt', Date.parse('2026-11-02T10:00:00Z'), ['a']],
    ['created_at', 'lte', '2026-11-02', ['a']],
    ['response_created_at', 'gt', '2026-11-02T00:00:00Z', ['b', 'c']],
  ] as const)('%s %s %j', async (field, op, value, expected) => {
    await expectIds(leaf(field, op, value), [...expected])
  })

  it('boolean equals', async () => {
    await expectIds(leaf('cached', 'equals', true), ['b'])
    await expectIds(leaf('cached', 'equals', false), ['a', 'c'])
  })
})

describe('trees', () => {
  it('"all", {} and and/or branches combine as written', async () => {
    await expectIds('all', ['a', 'b', 'c'])
    await expectIds({}, ['a', 'b', 'c'])
    const gpt = leaf('model', 'like', 'gpt%')
    const slow = leaf('latency', 'gte', 2000)
    await expectIds({ left: gpt, operator: 'and', right: slow }, ['c'])
    await expectIds({ left: gpt, operator: 'or', right: slow }, ['a', 'b', 'c'])
    await expectIds({ left: { left: gpt, operator: 'and', right: slow }, operator: 'or', right: 'all' }, [
      'a',
      'b',
      'c',
    ])
    await expectIds({ request_response_rmt: { properties: { env: { equals: 'prod' } } } }, ['a'])
    await expectIds({ properties: { env: { 'not-equals': 'prod' } } }, ['b', 'c'])
  })

  it('values never become SQL text', () => {
    const hostile = "x') OR 1=1 --{f0:String}"
    const compiled = compileRequestFilter({
      left: leaf('model', 'equals', hostile),
      operator: 'or',
      right: { properties: { [hostile]: { equals: hostile } } },
    })
    expect(compiled.sql).not.toContain('OR 1=1')
    // The model, the property's key, and its value (compared with its logged and its later values).
    expect(Object.values(compiled.params)).toEqual([hostile, hostile, hostile, hostile])
  })

  it('a prefix keeps two compiled filters apart in one query', () => {
    const a = compileRequestFilter(leaf('model', 'equals', 'x'), { prefix: 'a' })
    const b = compileRequestFilter(leaf('model', 'equals', 'y'), { prefix: 'b' })
    expect(a.sql).toBe('model = {a0:String}')
    expect(b.sql).toBe('model = {b0:String}')
    expect({ ...a.params, ...b.params }).toEqual({ a0: 'x', b0: 'y' })
  })
})

describe('invalid filters are a 400 naming the offending path', () => {
  const deep = (levels: number): unknown =>
    levels === 1 ? 'all' : { left: deep(levels - 1), operator: 'and', right: 'all' }
  /** A balanced tree of `leaves` conditions, shallow enough to test the count alone. */
  const wide = (leaves: number): unknown =>
    leaves === 1
      ? leaf('status', 'equals', 1)
      : { left: wide(Math.floor(leaves / 2)), operator: 'or', right: wide(Math.ceil(leaves / 2)) }

  it.each([
    [
      { requests: { model: { equals: 'x' } } },
      'body.filter.requests: unknown table; use one of request_response_rmt, properties',
    ],
    [
      leaf('colour', 'equals', 'x'),
      'body.filter.request_response_rmt.colour: unknown field; use one of request_id,',
    ],
    [
      leaf('model', 'gt', 'x'),
      'body.filter.request_response_rmt.model.gt: unknown operator for a text field; use one of equals, not-equals, like, ilike, contains, not-contains',
    ],
    [
      leaf('status', 'contains', 1),
      'body.filter.request_response_rmt.status.contains: unknown operator for a number field',
    ],
    [
      leaf('created_at', 'not-equals', 1),
      'body.filter.request_response_rmt.created_at.not-equals: unknown operator for a timestamp field',
    ],
    [
      leaf('cached', 'not-equals', true),
      'body.filter.request_response_rmt.cached.not-equals: unknown operator for a boolean field; use one of equals',
    ],
    [leaf('model', 'equals', 3), 'body.filter.request_response_rmt.model.equals: must be a string'],
    [leaf('status', 'equals', '200'), 'body.filter.request_response_rmt.status.equals: must be a number'],
    [
      leaf('cached', 'equals', 'true'),
      'body.filter.request_response_rmt.cached.equals: must be true or false',
    ],
    [
      leaf('created_at', 'gt', '2026-11-01T10:00:00'),
      'body.filter.request_response_rmt.created_at.gt: must be Unix milliseconds or an ISO 8601 timestamp with an offset',
    ],
    [
      leaf('created_at', 'gt', '3000-01-01T00:00:00Z'),
      'body.filter.request_response_rmt.created_at.gt: must be between 1900-01-01 and 2299-12-31',
    ],
    [
      leaf('model', 'equals', 'x'.repeat(10_001)),
      'body.filter.request_response_rmt.model.equals: must be at most 10000 characters',
    ],
    [
      { request_response_rmt: { model: { equals: 'x' }, status: { equals: 1 } } },
      'body.filter.request_response_rmt: must have exactly one field, found 2',
    ],
    [
      { request_response_rmt: { model: { equals: 'x', like: 'y' } } },
      'body.filter.request_response_rmt.model: must have exactly one operator, found 2',
    ],
    [
      { request_response_rmt: { model: 'x' } },
      'body.filter.request_response_rmt.model: must be an object with one operator',
    ],
    [{ properties: {} }, 'body.filter.properties: must have exactly one property name, found 0'],
    [
      leaf('model', 'like', 'gpt\\'),
      'body.filter.request_response_rmt.model.like: ends with an unfinished escape; write \\\\ for a literal backslash',
    ],
    [{ left: 'all', operator: 'xor', right: 'all' }, 'body.filter.operator: must be "and" or "or"'],
    [{ left: 'all', operator: 'and' }, 'body.filter.right: is required in a branch'],
    [
      { left: 'all', operator: 'and', right: 'all', extra: 1 },
      'body.filter.extra: is not allowed in a branch',
    ],
    [
      { left: 'all', operator: 'and', right: [1] },
      'body.filter.right: must be "all", {}, a condition or a {left, operator, right} branch',
    ],
    ['everything', 'body.filter: must be "all", {}, a condition'],
    [null, 'body.filter: must be "all"'],
    [
      { sessions_request_response_rmt: { session_total_cost: { gt: 1 } } },
      'body.filter.sessions_request_response_rmt: is only available in session queries',
    ],
    [
      { request_response_rmt: { constructor: { equals: 'x' } } },
      'body.filter.request_response_rmt.constructor: unknown field',
    ],
    [deep(MAX_DEPTH + 1), `: the filter nests deeper than ${MAX_DEPTH} levels`],
    [wide(MAX_LEAVES + 1), `: the filter has more than ${MAX_LEAVES} conditions`],
  ])('%#: %s', (filter, message) => {
    expect(rejection(() => compileRequestFilter(filter))).toContain(message)
  })

  it('accepts exactly the limits', () => {
    expect(() => compileRequestFilter(deep(MAX_DEPTH))).not.toThrow()
    expect(() => compileRequestFilter(wide(MAX_LEAVES))).not.toThrow()
  })

  it('bounds the wildcards of like and ilike patterns, the costly part of a filter', () => {
    const underscores = (n: number) => leaf('request_body', 'ilike', `%a${'_'.repeat(n)}b%`)
    expect(() => compileRequestFilter(underscores(MAX_PATTERN_UNDERSCORES))).not.toThrow()
    expect(rejection(() => compileRequestFilter(underscores(MAX_PATTERN_UNDERSCORES + 1)))).toBe(
      `body.filter.request_response_rmt.request_body.ilike: holds ${MAX_PATTERN_UNDERSCORES + 1} _ wildcards; at most ${MAX_PATTERN_UNDERSCORES} per pattern (write \\_ for a literal _)`,
    )
    // Escaped, they are literal characters.
    expect(() => compileRequestFilter(leaf('user_id', 'like', `%${'\\_'.repeat(100)}%`))).not.toThrow()
    // In all: `%x%` holds two; the budget counts across leaves, properties included.
    const spread = (leaves: number, first = 0): unknown =>
      leaves === 1
        ? { properties: { [`k${first}`]: { like: `%${first}%` } } }
        : {
            left: spread(leaves >> 1, first),
            operator: 'and',
            right: spread(leaves - (leaves >> 1), first + (leaves >> 1)),
          }
    expect(() => compileRequestFilter(spread(MAX_FILTER_WILDCARDS / 2))).not.toThrow()
    expect(rejection(() => compileRequestFilter(spread(MAX_FILTER_WILDCARDS / 2 + 1)))).toMatch(
      /\.like: the filter's like and ilike patterns hold more than 64 wildcards \(% and _\) in all$/,
    )
    // Other operators take % and _ as plain text.
    expect(() => compileRequestFilter(leaf('request_body', 'contains', '_'.repeat(1000)))).not.toThrow()
  })

  it('names the path inside a branch', () => {
    const filter = {
      left: 'all',
      operator: 'or',
      right: { left: leaf('model', 'equals', 1), operator: 'and', right: {} },
    }
    expect(rejection(() => compileRequestFilter(filter, { path: 'body.where' }))).toBe(
      'body.where.right.left.request_response_rmt.model.equals: must be a string',
    )
  })
})

describe('session filters split at "and" and refuse a mixed "or"', () => {
  const session = (field: string, op: string, value: unknown) => ({
    sessions_request_response_rmt: { [field]: { [op]: value } },
  })

  it('sends request leaves to WHERE and session leaves to HAVING', () => {
    const compiled = compileSessionFilter({
      left: {
        left: leaf('model', 'equals', 'm'),
        operator: 'and',
        right: session('session_total_cost', 'gt', 1),
      },
      operator: 'and',
      right: {
        left: session('session_total_requests', 'gte', 2),
        operator: 'or',
        right: session('session_created_at', 'lt', '2026-01-01T00:00:00Z'),
      },
    })
    expect(compiled.where).toBe('model = {f0:String}')
    expect(compiled.having).toBe(
      "(session_total_cost > {f1:Float64} AND (session_total_requests >= {f2:Float64} OR session_created_at < fromUnixTimestamp64Milli({f3:Int64}, 'UTC')))",
    )
    expect(compiled.params).toEqual({ f0: 'm', f1: '1', f2: '2', f3: Date.parse('2026-01-01T00:00:00Z') })
  })

  it('"all" leaves both sides open; or with "all" is always true', () => {
    expect(compileSessionFilter('all')).toEqual({ where: 'true', having: 'true', scoreJoin: '', params: {} })
    const compiled = compileSessionFilter({
      left: session('session_avg_latency', 'lt', 5),
      operator: 'or',
      right: {},
    })
    expect([compiled.where, compiled.having]).toEqual(['true', 'true'])
  })

  it.each([
    [
      { left: leaf('model', 'equals', 'm'), operator: 'or', right: session('session_total_cost', 'gt', 1) },
      'body.filter',
    ],
    [
      {
        left: 'all',
        operator: 'and',
        right: {
          left: {
            left: leaf('model', 'equals', 'm'),
            operator: 'and',
            right: session('session_total_tokens', 'gt', 1),
          },
          operator: 'or',
          right: leaf('status', 'equals', 200),
        },
      },
      'body.filter.right',
    ],
  ])('mixed under or: %j', (filter, path) => {
    expect(rejection(() => compileSessionFilter(filter))).toBe(
      `${path}: "or" cannot combine session-level (sessions_request_response_rmt) and request-level conditions: ` +
        'request conditions choose which requests are aggregated and session conditions filter the aggregated ' +
        'sessions, so they can only be combined with "and"',
    )
  })

  it('rejects unknown session fields and text operators on them', () => {
    expect(rejection(() => compileSessionFilter(session('session_name', 'equals', 'x')))).toContain(
      'body.filter.sessions_request_response_rmt.session_name: unknown field; use one of session_total_cost,',
    )
    expect(rejection(() => compileSessionFilter(session('session_total_cost', 'contains', 'x')))).toContain(
      'session_total_cost.contains: unknown operator for a number field',
    )
  })
})
