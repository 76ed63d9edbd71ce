// The cases of bench:sessions, which bench:cluster runs too: each a body of POST /v1/session/query
// or /count over bench:sessions' data (sessions-data.ts), with the hand-written SQL of the same
// answer (sessions-sql.ts), and how both are called and summed up.
import { BENCH_START, BENCH_WINDOW } from './sessions-data.ts'
import type { CEILINGS } from './sessions-sql.ts'

const START = BENCH_START
const DAY = 86_400_000
const WINDOW = BENCH_WINDOW

export interface Case {
  name: string
  path: '/v1/session/query' | '/v1/session/count'
  body: Record<string, unknown>
  ceiling: keyof typeof CEILINGS
  params?: Record<string, unknown>
}
export const base = { timeFilter: WINDOW, timezoneDifference: 0, filter: 'all' }
export const cases: Case[] = [
  { name: 'unfiltered 30-day page', path: '/v1/session/query', body: base, ceiling: 'timePage' },
  {
    name: 'property + model filter',
    path: '/v1/session/query',
    body: {
      ...base,
      filter: {
        left: { request_response_rmt: { model: { equals: 'gpt-4o' } } },
        operator: 'and',
        right: { request_response_rmt: { properties: { env: { equals: 'prod' } } } },
      },
    },
    ceiling: 'modelPropertyPage',
  },
  {
    name: 'search',
    path: '/v1/session/query',
    body: { ...base, search: 'review #12' },
    ceiling: 'searchPage',
  },
  {
    name: 'nameEquals',
    path: '/v1/session/query',
    body: { ...base, nameEquals: 'Onboarding #2' },
    ceiling: 'namePage',
  },
  {
    name: 'deep offset (10,000)',
    path: '/v1/session/query',
    body: { ...base, offset: 10_000 },
    ceiling: 'timePage',
    params: { offset: 10_000 },
  },
  {
    name: 'one-day window',
    path: '/v1/session/query',
    body: { ...base, timeFilter: { startTimeUnixMs: START + 20 * DAY, endTimeUnixMs: START + 21 * DAY } },
    ceiling: 'timePage',
    params: { start: START + 20 * DAY, end: START + 21 * DAY },
  },
  { name: 'count', path: '/v1/session/count', body: base, ceiling: 'count' },
  {
    name: '(extra) sort by total_cost',
    path: '/v1/session/query',
    body: { ...base, sort: { total_cost: 'desc' } },
    ceiling: 'costPage',
  },
]

/** The answer of one case through the API: its session ids in order, or the count. */
export async function callApi(url: string, key: string, c: Case): Promise<unknown> {
  const res = await fetch(`${url}${c.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(c.body),
  })
  const json = (await res.json()) as { data: unknown; error: string | null }
  if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${json.error}`)
  // Compared with the ceiling by session ids (or the count).
  return Array.isArray(json.data) ? json.data.map((s: { session_id: string }) => s.session_id) : json.data
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number
}

export function ms(value: number): string {
  return `${value.toFixed(0)} ms`.padStart(9)
}
