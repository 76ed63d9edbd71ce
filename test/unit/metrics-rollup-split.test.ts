import { describe, expect, it } from 'vitest'
import type { MetricsQuery } from '../../services/api/analytics/sql.ts'
import { freshHoursStatement, metricsStatement } from '../../services/api/analytics/sql.ts'

// Which statement the metrics query runs for a given set of fresh hours (engine-free; the answers
// themselves are compared with the raw rows' in test/metrics/metrics-rollup.test.ts).

const H = 3_600_000
const START = Date.UTC(2026, 0, 1)

function query(overrides: Partial<MetricsQuery> = {}): MetricsQuery {
  return {
    organizationId: '00000000-0000-4000-8000-000000000001',
    startMs: START,
    endMs: START + 200 * H,
    timezoneDifference: 0,
    filter: { sql: 'true', params: {}, columns: new Set() },
    measures: ['count'],
    dimensions: [],
    granularity: 'hour',
    limit: 10,
    ...overrides,
  }
}

const hours = (...n: number[]) => n.map((i) => (START + i * H) / 1000)

describe('the metrics statement with the rollup', () => {
  it('reads the raw rows alone when no hour is fresh', () => {
    expect(metricsStatement(query(), []).query).not.toContain('request_hours')
    expect(metricsStatement(query()).query).not.toContain('request_hours')
  })

  it('reads fresh stretches from the rollup and the rest raw, each a range of its own', () => {
    const s = metricsStatement(query(), hours(0, 1, 2, 5, 6))
    expect(s.query).toContain('FROM request_hours')
    expect(s.query).toContain('FROM request_response_rmt FINAL')
    // Fresh: [0, 3) and [5, 7) hours; raw: [3, 5) and [7, 200).
    expect(s.query_params).toMatchObject({
      fresh_from_0: hours(0)[0],
      fresh_to_0: hours(3)[0],
      fresh_from_1: hours(5)[0],
      fresh_to_1: hours(7)[0],
      raw_from_0: START + 3 * H,
      raw_to_0: START + 5 * H,
      raw_from_1: START + 7 * H,
      raw_to_1: START + 200 * H,
    })
    expect(s.query_params).not.toHaveProperty('fresh_from_2')
    expect(s.query_params).not.toHaveProperty('raw_from_2')
  })

  it('leaves out the raw side when every hour is fresh', () => {
    const all = Array.from({ length: 200 }, (_, i) => i)
    const s = metricsStatement(query(), hours(...all))
    expect(s.query).not.toContain('request_response_rmt')
    expect(s.query_params).toMatchObject({ fresh_from_0: hours(0)[0], fresh_to_0: hours(200)[0] })
  })

  it('reads raw whole when the stretches are too many to name', () => {
    const everyOther = Array.from({ length: 100 }, (_, i) => 2 * i)
    expect(metricsStatement(query(), hours(...everyOther)).query).not.toContain('request_hours')
  })

  it('ignores hours outside the window', () => {
    const s = metricsStatement(query({ startMs: START + 2 * H }), hours(0, 1, 2))
    expect(s.query_params).toMatchObject({ fresh_from_0: hours(2)[0], fresh_to_0: hours(3)[0] })
    expect(s.query_params).not.toHaveProperty('fresh_from_1')
  })

  it('asks for fresh hours only when the rollup can answer', () => {
    expect(freshHoursStatement(query())).toBeDefined()
    expect(freshHoursStatement(query({ dimensions: ['user_id'] }))).toBeUndefined()
    expect(freshHoursStatement(query({ granularity: 'minute' }))).toBeUndefined()
    expect(freshHoursStatement(query({ timezoneDifference: -330 }))).toBeUndefined()
    const onProperty = { sql: 'x', params: {}, columns: new Set(['properties']) }
    expect(freshHoursStatement(query({ filter: onProperty }))).toBeUndefined()
    const onModel = { sql: 'x', params: {}, columns: new Set(['model', 'status']) }
    expect(freshHoursStatement(query({ filter: onModel }))).toBeDefined()
    // A window without a whole hour in it.
    expect(freshHoursStatement(query({ startMs: START + 1, endMs: START + H + 1 }))).toBeUndefined()
  })
})
