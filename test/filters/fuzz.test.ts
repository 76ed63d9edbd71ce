import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseHandle } from '../../services/shared/clickhouse/client.ts'
import { AppError } from '../../services/shared/errors.ts'
import {
  type CompiledFilter,
  compileRequestFilter,
  compileSessionFilter,
} from '../../services/shared/filters/compile.ts'
import {
  type FieldDef,
  OPERATORS,
  REQUEST_FIELDS,
  SESSION_FIELDS,
} from '../../services/shared/filters/fields.ts'
import { insertEvents, openMigratedClickHouse } from '../support/clickhouse.ts'
import { sampleEvent } from '../support/events.ts'

/** mulberry32: a small seeded generator, so a failing tree can be reproduced from its seed. */
function generator(seed: number) {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  return { next, int, pick }
}

type Random = ReturnType<typeof generator>

const HOSTILE = [
  "'",
  "\\'",
  '\\',
  '"',
  '`',
  '{f0:String}',
  '}',
  "') OR 1=1 --",
  "'; DROP TABLE request_response_rmt; --",
  '%',
  '_',
  '\0',
  '\n',
  '\t',
  'é',
  '😀',
  '\u2028',
  'UNION SELECT',
  '/*',
  '*/',
  '$$',
  'x',
]
const TEXT_OPS = OPERATORS.text
const ALL_OPS = [...new Set([...Object.values(OPERATORS).flat(), 'between', 'in', 'EQUALS', '', '__proto__'])]
const FIELD_NAMES = [...REQUEST_FIELDS.keys(), 'properties', 'colour', 'constructor', 'toString', '']
const SESSION_NAMES = [...SESSION_FIELDS.keys(), 'session_name']

function text(r: Random): string {
  let s = ''
  for (let i = r.int(5); i >= 0; i -= 1) s += r.pick(HOSTILE)
  return s
}

function value(r: Random): unknown {
  switch (r.int(12)) {
    case 0:
    case 1:
    case 2:
      return text(r)
    case 3:
      return r.pick([0, -0, 1, -1, 200, 0.5, 1e308, -1e308, 5e-324, 2 ** 53, 4294967296, -2147483649])
    case 4:
      return r.int(2_000_000_000) * 1000
    case 5:
      return r.pick([
        '2026-11-01T10:00:00Z',
        '2026-11-01T10:00:00.123+05:30',
        '2026-11-01',
        '1900-01-01T00:00:00Z',
        '2299-12-31T23:59:59.999Z',
        '1899-12-31T23:59:59Z',
        '2026-11-01T10:00:00',
        'yesterday',
      ])
    case 6:
      return r.pick([Date.UTC(1900, 0, 1), Date.UTC(2299, 11, 31), -1, 0, 1.5, 8.64e15])
    case 7:
      return r.next() < 0.5
    case 8:
      return r.pick([null, [], {}, [1], { equals: 1 }])
    default:
      return r.pick(['gpt-4o', 'openai', '', 'prod', randomUUID()])
  }
}

function condition(r: Random): unknown {
  const op = r.next() < 0.85 ? r.pick(ALL_OPS.slice(0, 11)) : r.pick(ALL_OPS)
  if (r.next() < 0.03) return { [op]: value(r), equals: value(r) }
  return { [op]: value(r) }
}

/** A value of the field's type, hostile where it can be. */
function typedValue(r: Random, field: FieldDef, op: string): unknown {
  switch (field.type) {
    case 'text':
      return field.uuid && (op === 'equals' || op === 'not-equals') ? randomUUID() : text(r)
    case 'number':
      return r.pick([0, -0, 1, -1, 200, 0.5, 1e308, -1e308, 5e-324, 2 ** 53, 4294967296, -2147483649])
    case 'timestamp':
      return r.pick([
        '2026-11-01T10:00:00Z',
        '2026-11-01T10:00:00.123+05:30',
        '2026-11-01',
        '1900-01-01T00:00:00Z',
        '2299-12-31T23:59:59.999Z',
        Date.UTC(1900, 0, 1),
        Date.UTC(2299, 11, 31),
        0,
        -1,
      ])
    case 'boolean':
      return r.next() < 0.5
  }
}

function typedCondition(r: Random, fields: ReadonlyMap<string, FieldDef>): [string, unknown] {
  const name = r.pick([...fields.keys()])
  const field = fields.get(name) as FieldDef
  const op = r.pick(OPERATORS[field.type])
  return [name, { [op]: typedValue(r, field, op) }]
}

/** Almost always a valid leaf (one bad leaf makes the whole tree a 400), sometimes chaos. */
function leaf(r: Random, sessions: boolean): unknown {
  if (r.next() < 0.03) return chaosLeaf(r, sessions)
  const roll = r.next()
  if (sessions && roll < 0.2) {
    const [name, condition] = typedCondition(r, SESSION_FIELDS)
    return { sessions_request_response_rmt: { [name]: condition } }
  }
  if (roll < 0.4) {
    const property = { [text(r)]: { [r.pick(TEXT_OPS)]: text(r) } }
    return r.next() < 0.5 ? { properties: property } : { request_response_rmt: { properties: property } }
  }
  if (roll < 0.45) return r.pick(['all', {}])
  const [name, condition] = typedCondition(r, REQUEST_FIELDS)
  return { request_response_rmt: { [name]: condition } }
}

function chaosLeaf(r: Random, sessions: boolean): unknown {
  const roll = r.next()
  if (sessions && roll < 0.25)
    return { sessions_request_response_rmt: { [r.pick(SESSION_NAMES)]: condition(r) } }
  if (roll < 0.35) {
    const property = { [text(r)]: { [r.pick(TEXT_OPS)]: r.next() < 0.9 ? text(r) : value(r) } }
    return r.next() < 0.5 ? { properties: property } : { request_response_rmt: { properties: property } }
  }
  if (roll < 0.4) return r.pick(['all', {}, 'none', null, 7, { nope: {} }])
  return { request_response_rmt: { [r.pick(FIELD_NAMES)]: condition(r) } }
}

/** A tree of `leaves` conditions; `skew` makes chains, to reach the depth limit. */
function tree(r: Random, leaves: number, sessions: boolean, skew: boolean): unknown {
  if (leaves <= 1) return leaf(r, sessions)
  const left = skew ? 1 : 1 + r.int(leaves - 1)
  const operator =
    r.next() < 0.99 ? (r.next() < (sessions ? 0.8 : 0.5) ? 'and' : 'or') : r.pick(['AND', 'not', undefined])
  const node: Record<string, unknown> = {
    left: tree(r, left, sessions, skew),
    operator,
    right: tree(r, leaves - left, sessions, skew),
  }
  if (r.next() < 0.002) node.extra = true
  return node
}

/** Mostly small trees, some around the leaf limit (200) and some chains around the depth limit (32). */
function randomTree(seed: number, sessions: boolean): unknown {
  const r = generator(seed)
  const roll = r.next()
  if (roll < 0.6) return tree(r, 1 + r.int(8), sessions, false)
  if (roll < 0.85) return tree(r, 9 + r.int(32), sessions, false)
  if (roll < 0.89) return tree(r, 190 + r.int(20), sessions, false)
  return tree(r, 28 + r.int(8), sessions, true)
}

/** Compiles, or returns null for a 400; anything else (a TypeError, a 500) fails the test. */
function attempt<T>(compile: () => T, seed: number): T | null {
  try {
    return compile()
  } catch (err) {
    if (err instanceof AppError && err.status === 400) return null
    throw new Error(`seed ${seed}: compile threw a non-400: ${(err as Error).stack}`)
  }
}

/** The compiled SQL is our vocabulary only: every value is a placeholder, the one literal is 'UTC'. */
function expectClosedVocabulary(sql: string, seed: number) {
  const stripped = sql
    .replace(/\{[A-Za-z0-9_]+:(String|Float64|Int64|Bool|UUID)\}/g, '?')
    .replaceAll("'UTC'", '')
  expect(stripped, `seed ${seed}: ${sql}`).toMatch(/^[A-Za-z0-9_ ().,=!<>?[\]]*$/)
}

const org = randomUUID()
let ch: ClickHouseHandle
let rows = 0

beforeAll(async () => {
  ch = await openMigratedClickHouse()
  const events = Array.from({ length: 40 }, (_, i) =>
    sampleEvent({
      organization_id: org,
      created_at: new Date(Date.UTC(2026, 10, 1, i)),
      session_id: `s-${i % 7}`,
      model: i % 2 ? 'gpt-4o' : 'claude',
      cost_usd: i / 10,
      cached: i % 3 === 0,
      time_to_first_token_ms: i % 4 === 0 ? null : i,
      properties: { prod: "'", x: `${i}` },
    }),
  )
  await insertEvents(ch, events)
  rows = events.length
})

afterAll(() => ch.close())

async function count(): Promise<number> {
  const rs = await ch.client.query({
    query: 'SELECT count() AS n FROM request_response_rmt WHERE organization_id = {org:UUID}',
    query_params: { org },
    format: 'JSONEachRow',
  })
  return Number((await rs.json<{ n: number }>())[0]?.n)
}

describe('filter fuzz: random trees compile to SQL ClickHouse accepts, or to a 400', () => {
  it('3,000 request filter trees', async () => {
    const accepted: { seed: number; compiled: CompiledFilter }[] = []
    let rejected = 0
    for (let seed = 1; seed <= 3000; seed += 1) {
      const compiled = attempt(
        () => compileRequestFilter(randomTree(seed, false), { prefix: `t${seed}_` }),
        seed,
      )
      if (!compiled) {
        rejected += 1
        continue
      }
      expectClosedVocabulary(compiled.sql, seed)
      accepted.push({ seed, compiled })
    }
    // Both outcomes must be exercised for the fuzz to mean anything.
    expect(accepted.length).toBeGreaterThan(300)
    expect(rejected).toBeGreaterThan(300)

    // Many filters per query (each under its own prefix) keep the run short; a failing batch is
    // re-run one by one to name the seed.
    for (let i = 0; i < accepted.length; i += 50) {
      const batch = accepted.slice(i, i + 50)
      const query = (items: typeof batch) => ({
        query: `SELECT ${items.map((a, n) => `countIf(${a.compiled.sql}) AS c${n}`).join(', ')}
                FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}`,
        query_params: Object.assign({ org }, ...items.map((a) => a.compiled.params)),
        format: 'JSONEachRow' as const,
      })
      try {
        await (await ch.client.query(query(batch))).json()
      } catch {
        for (const item of batch) {
          await ch.client.query(query([item])).then(
            (rs) => rs.json(),
            (err: Error) => {
              throw new Error(`seed ${item.seed}: ClickHouse refused ${item.compiled.sql}: ${err.message}`)
            },
          )
        }
      }
    }
    expect(await count()).toBe(rows)
  }, 120_000)

  it('1,000 session filter trees, WHERE before and HAVING after aggregation', async () => {
    let accepted = 0
    for (let seed = 1; seed <= 1000; seed += 1) {
      const compiled = attempt(() => compileSessionFilter(randomTree(seed, true)), seed)
      if (!compiled) continue
      accepted += 1
      expectClosedVocabulary(`${compiled.where} ${compiled.having}`, seed)
      const query = `
        SELECT count() FROM (
          SELECT session_id, sum(cost) AS session_total_cost, count() AS session_total_requests,
                 sum(total_tokens) AS session_total_tokens, avg(latency) AS session_avg_latency,
                 min(request_created_at) AS session_created_at,
                 max(request_created_at) AS session_latest_request_created_at
          FROM request_response_rmt FINAL
          WHERE organization_id = {org:UUID} AND (${compiled.where})
          GROUP BY session_id HAVING ${compiled.having})`
      await ch.client.query({ query, query_params: { ...compiled.params, org }, format: 'JSONEachRow' }).then(
        (rs) => rs.json(),
        (err: Error) => {
          throw new Error(
            `seed ${seed}: ClickHouse refused ${compiled.where} / ${compiled.having}: ${err.message}`,
          )
        },
      )
    }
    expect(accepted).toBeGreaterThan(100)
    expect(await count()).toBe(rows)
  }, 120_000)
})
