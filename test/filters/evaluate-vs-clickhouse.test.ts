import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { matchesTree } from '../../services/dispatcher/evaluate-filter.ts'
import type { ClickHouseHandle } from '../../services/shared/clickhouse/client.ts'
import { AppError } from '../../services/shared/errors.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { compileRequestFilter } from '../../services/shared/filters/compile.ts'
import { OPERATORS, REQUEST_FIELDS } from '../../services/shared/filters/fields.ts'
import { parseFilter } from '../../services/shared/filters/parse.ts'
import { insertEvents, openMigratedClickHouse } from '../support/clickhouse.ts'
import { sampleEvent } from '../support/events.ts'
import { rng } from '../support/random.ts'

// One filter language (docs/sessions.md): the dispatcher decides a webhook's filter in JavaScript
// (services/dispatcher/evaluate-filter.ts), queries and exports in ClickHouse (compile.ts). Both read the same parsed tree;
// this compares their answers on random trees over random rows stored in the real engine.

/**
 * Text that tells the two apart if anything does: case, Unicode case pairs, LIKE's own characters.
 * Not here: code points whose lower case has another UTF-8 length (ẞ/ß, Ⱥ/ⱥ), on which ClickHouse's
 * case-insensitive search answers differently by position; evaluate-filter.ts matches them exactly.
 */
const WORDS = [
  '',
  'a',
  'A',
  'ab',
  'aB',
  'abc',
  'gpt-4o',
  'GPT-4O',
  'é',
  'É',
  'éa',
  'ß',
  'SS',
  'Σ',
  'σ',
  'ς',
  'İ',
  'i',
  'K', // Kelvin sign
  'k',
  'ǅ',
  'ǆ',
  'Ǆ',
  'ı',
  'I',
  'ſ',
  'S',
  '😀',
  '%',
  '_',
  'a_b',
  'a%b',
  '\\',
  'a\\b',
  '\n',
  'x y',
  'a.b',
  '(a)',
  '[a]',
  'a^$',
  'a{1}',
  'a|b',
  'a/b',
  'a+?*',
]
const PATTERNS = [
  'gpt-%',
  '%-4_',
  '%.%',
  '(%)',
  '[a]%',
  '%a%b%',
  '%a_b%c',
  'a%_%b',
  '%a.b%',
  '%(a)|[b]%',
  '\\d%',
  '%a\\\\%',
  '%ſ%',
  '%\\%%',
  '_%_%_',

  '%',
  '_',
  'a%',
  '%b',
  '%a%',
  'a_',
  '_b',
  '\\%',
  '\\_',
  '\\\\',
  '%é%',
  '%É%',
  '_%_',
  'a\\%b',
  'ß%',
  '%σ',
]
const NUMBERS = [0, 1, -1, 1.5, 200, 404, 1e-9, 0.1 + 0.2, 0.3, 4294967295, 2 ** 53, -0]
const TIMES = [
  Date.UTC(2026, 10, 1),
  Date.UTC(2026, 10, 1, 0, 0, 0, 1),
  Date.UTC(2026, 10, 2),
  Date.UTC(1970, 0, 1),
]
const KEYS = ['env', 'Env', 'tier', 'Helicone-Session-Id', 'Helicone-Session-Name', 'missing']

type Random = () => number
const pick = <T>(r: Random, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T

function randomEvent(r: Random, organizationId: string): RequestEvent {
  const properties: Record<string, string> = {}
  for (const key of KEYS.slice(0, 3)) if (r() < 0.6) properties[key] = pick(r, WORDS)
  const created = pick(r, TIMES)
  return sampleEvent({
    organization_id: organizationId,
    created_at: new Date(created),
    completed_at: new Date(created + pick(r, [0, 1, 1000])),
    latency_ms: pick(r, [0, 1, 200, 4294967295]),
    time_to_first_token_ms: r() < 0.4 ? null : pick(r, [0, 1, 200]),
    provider: pick(r, ['openai', 'anthropic', '']),
    model: pick(r, WORDS),
    status: pick(r, [200, 404, -1, 0]),
    cost_usd: pick(r, [0, 1.5, 1e-9, 0.30000000000000004, 0.3]),
    cached: r() < 0.5,
    user_id: pick(r, WORDS),
    session_id: pick(r, ['', 's-1', 'S-1']),
    session_name: pick(r, WORDS),
    properties,
    request_body: pick(r, WORDS),
  })
}

const FIELDS = [
  'model',
  'provider',
  'user_id',
  'session_id',
  'session_name',
  'request_body',
  'latency',
  'time_to_first_token',
  'status',
  'cost',
  'created_at',
  'cached',
  'request_id',
]

function randomLeaf(r: Random, ids: string[]): unknown {
  if (r() < 0.3) {
    const op = pick(r, OPERATORS.text)
    return {
      properties: { [pick(r, KEYS)]: { [op]: op.includes('like') ? pick(r, PATTERNS) : pick(r, WORDS) } },
    }
  }
  const name = pick(r, FIELDS)
  const field = REQUEST_FIELDS.get(name)
  if (!field) throw new Error(`no field ${name}`)
  const op = pick(r, OPERATORS[field.type])
  const value =
    field.type === 'number'
      ? pick(r, NUMBERS)
      : field.type === 'timestamp'
        ? pick(r, TIMES)
        : field.type === 'boolean'
          ? r() < 0.5
          : field.uuid && (op === 'equals' || op === 'not-equals')
            ? pick(r, ids).toUpperCase()
            : op.includes('like')
              ? pick(r, PATTERNS)
              : pick(r, WORDS)
  return { request_response_rmt: { [name]: { [op]: value } } }
}

function randomTree(r: Random, ids: string[], depth = 0): unknown {
  if (depth >= 3 || r() < 0.4) return r() < 0.03 ? 'all' : randomLeaf(r, ids)
  return {
    left: randomTree(r, ids, depth + 1),
    operator: r() < 0.5 ? 'and' : 'or',
    right: randomTree(r, ids, depth + 1),
  }
}

describe('the filter evaluator against ClickHouse', () => {
  let ch: ClickHouseHandle
  beforeAll(async () => {
    ch = await openMigratedClickHouse()
  })
  afterAll(() => ch?.close())

  it('agrees with ClickHouse on 600 random trees over 60 random rows', async () => {
    const r = rng(20261126)
    const organizationId = randomUUID()
    const events = Array.from({ length: 60 }, () => randomEvent(r, organizationId))
    await insertEvents(ch, events)
    const ids = events.map((e) => e.request_id)

    const trees: { filter: unknown; sql: string; params: Record<string, unknown>; expected: string[] }[] = []
    let refused = 0
    while (trees.length < 600) {
      const filter = randomTree(r, ids)
      try {
        const tree = parseFilter(filter, { path: 'filter' })
        const compiled = compileRequestFilter(filter, { path: 'filter', prefix: `t${trees.length}_` })
        const expected = events.filter((e) => matchesTree(tree, e)).map((e) => e.request_id)
        trees.push({ filter, ...compiled, expected: expected.sort() })
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 400) throw err
        refused++
      }
    }
    // Every tree in one pass per 100: each is a column of booleans over the same rows.
    for (let start = 0; start < trees.length; start += 100) {
      const batch = trees.slice(start, start + 100)
      const rs = await ch.client.query({
        query: `SELECT toString(request_id) AS id, [${batch.map((t) => `toUInt8(ifNull(${t.sql}, 0))`).join(', ')}] AS hits
                FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}`,
        query_params: { org: organizationId, ...Object.assign({}, ...batch.map((t) => t.params)) },
        format: 'JSONEachRow',
      })
      const rows = await rs.json<{ id: string; hits: number[] }>()
      expect(rows).toHaveLength(events.length)
      batch.forEach((t, i) => {
        const got = rows
          .filter((row) => row.hits[i] === 1)
          .map((row) => row.id)
          .sort()
        const differing = events.filter(
          (e) => got.includes(e.request_id) !== t.expected.includes(e.request_id),
        )
        expect(
          got,
          `tree ${start + i}: ${JSON.stringify(t.filter)}; rows that differ: ${JSON.stringify(differing)}`,
        ).toEqual(t.expected)
      })
    }
    // The generator reaches both answers and both outcomes of parsing.
    const sizes = trees.map((t) => t.expected.length)
    expect(sizes.filter((n) => n === 0).length).toBeGreaterThan(20)
    expect(sizes.filter((n) => n > 0 && n < events.length).length).toBeGreaterThan(200)
    expect(refused).toBeLessThan(600)
  })

  it('matches code points whose cases differ in UTF-8 length exactly, and folds case as the engine does', () => {
    const event = sampleEvent({ model: 'Straße ẞ ς ǅ' })
    const has = (op: string, value: string) =>
      matchesTree(parseFilter({ request_response_rmt: { model: { [op]: value } } }), event)
    expect(has('contains', 'STRASSE')).toBe(false)
    expect(has('contains', 'STRAßE')).toBe(true)
    expect(has('contains', 'ẞ')).toBe(true)
    expect(has('contains', 'ße ß')).toBe(false) // ẞ is matched exactly
    // Substring search (contains, ilike '%text%') lower-cases: ς is not σ, ǅ only ǅ.
    expect(has('contains', 'σ')).toBe(false)
    expect(has('ilike', '%ς ǅ%')).toBe(true)
    expect(has('ilike', '%σ ǅ%')).toBe(false)
    expect(has('contains', 'ǆ')).toBe(false)
    // Any other ilike pattern is a regular expression with case folding: ς is σ, ǅ is ǆ.
    expect(has('ilike', '%σ ǆ')).toBe(true)
    // `\\` then `%` is a literal backslash and the end wildcard: still a substring search.
    expect(matchesTree(parseFilter({ request_response_rmt: { model: { ilike: '%SS\\\\%' } } }), event)).toBe(
      false,
    )
    expect(has('like', 'straße%')).toBe(false)
    expect(has('ilike', 'straße%')).toBe(true)
  })

  it('decides a pattern of many % on a long text without backtracking out of control', () => {
    // As a backtracking regular expression this pattern takes longer than the universe on this
    // text (each % multiplies the ways to try); pieces found once each keep it linear. It runs in
    // a child with a deadline: a regression must fail the test, not hang the run.
    const script = `
      const { parseFilter } = await import(${JSON.stringify(new URL('../../services/shared/filters/parse.ts', import.meta.url).href)})
      const { matchesTree } = await import(${JSON.stringify(new URL('../../services/dispatcher/evaluate-filter.ts', import.meta.url).href)})
      const text = 'a'.repeat(4096)
      const event = { properties: {}, user_id: text }
      const like = parseFilter({ request_response_rmt: { user_id: { like: '%a'.repeat(60) + '%b' } } })
      const ilike = parseFilter({ request_response_rmt: { user_id: { ilike: '%A_'.repeat(15) + '%B' } } })
      console.log(JSON.stringify([
        matchesTree(like, event),
        matchesTree(like, { ...event, user_id: text.slice(1) + 'b' }),
        matchesTree(ilike, event),
        matchesTree(ilike, { ...event, user_id: text.slice(1) + 'B' }),
      ]))`
    const run = spawnSync(process.execPath, ['--input-type=module', '--eval', script], {
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(run.signal, `the evaluation did not end within 20 s: ${run.stderr}`).toBeNull()
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual([false, true, false, true])
  })

  it('refuses to decide a session-level condition on one request', () => {
    const tree = parseFilter(
      { sessions_request_response_rmt: { session_total_cost: { gt: 1 } } },
      { sessions: true },
    )
    expect(() => matchesTree(tree, sampleEvent())).toThrow(/session-level condition cannot be decided/)
  })
})
