import { toRow } from '../../services/shared/clickhouse/request-table.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { callApi } from '../support/api.ts'
import type { TestOrg, TestTally } from '../support/harness.ts'

const WINDOW = {
  startTimeUnixMs: Date.parse('2026-11-01T00:00:00.000Z'),
  endTimeUnixMs: Date.parse('2026-11-03T00:00:00.000Z'),
}

/** A valid body; override what the test is about. */
export const body = (overrides: Record<string, unknown> = {}) => ({
  timeFilter: WINDOW,
  timezoneDifference: 0,
  filter: 'all',
  ...overrides,
})

/** The page's sessions; fails the test on anything but a 200. */
export async function sessions(tally: TestTally, org: TestOrg, payload: unknown) {
  const res = await callApi(tally.app, 'POST', '/v1/session/query', { as: org, body: payload })
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.error}`)
  return res.data as Record<string, unknown>[]
}

export async function count(tally: TestTally, org: TestOrg, payload: unknown): Promise<number> {
  const res = await callApi(tally.app, 'POST', '/v1/session/count', { as: org, body: payload })
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.error}`)
  return (res.data as { count: number }).count
}

export async function insert(tally: TestTally, events: RequestEvent[]) {
  await tally.clickhouse.insert({
    table: 'request_response_rmt',
    values: events.map(toRow),
    format: 'JSONEachRow',
  })
}
