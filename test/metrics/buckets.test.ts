import { describe, expect, it } from 'vitest'
import { autoGranularity, bucketStarts } from '../../services/api/analytics/buckets.ts'

const ms = (iso: string) => Date.parse(iso)
const iso = (starts: number[] | undefined) => starts?.map((s) => new Date(s).toISOString())

describe('bucket starts at the caller offset', () => {
  it('starts hours on the half hour for a half-hour offset (UTC+05:30)', () => {
    expect(
      iso(bucketStarts(ms('2026-11-01T00:00:00Z'), ms('2026-11-01T02:00:00Z'), -330, 'hour', 10)),
    ).toEqual(['2026-10-31T23:30:00.000Z', '2026-11-01T00:30:00.000Z', '2026-11-01T01:30:00.000Z'])
  })

  it('starts weeks on the caller Monday and months on the caller first', () => {
    // 2026-11-02 is a Monday; at UTC+02:00 it starts at 2026-11-01T22:00Z.
    expect(
      iso(bucketStarts(ms('2026-11-01T21:00:00Z'), ms('2026-11-01T23:00:00Z'), -120, 'week', 10)),
    ).toEqual(['2026-10-25T22:00:00.000Z', '2026-11-01T22:00:00.000Z'])
    expect(iso(bucketStarts(ms('2026-01-31T00:00:00Z'), ms('2026-03-02T00:00:00Z'), 0, 'month', 10))).toEqual(
      ['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    )
  })

  it('ends before the window end and stops at the cap', () => {
    expect(bucketStarts(ms('2026-11-01T00:00:00Z'), ms('2026-11-01T01:00:00Z'), 0, 'hour', 10)).toHaveLength(
      1,
    )
    expect(bucketStarts(0, 2_001 * 60_000, 0, 'minute', 2_000)).toBeUndefined()
    expect(bucketStarts(0, 2_000 * 60_000, 0, 'minute', 2_000)).toHaveLength(2_000)
  })

  it('picks the finest granularity with at most 200 buckets for auto', () => {
    const start = ms('2026-10-01T00:00:00Z')
    expect(autoGranularity(start, start + 3 * 3_600_000, 0)).toBe('minute')
    expect(autoGranularity(start, start + 7 * 86_400_000, 0)).toBe('hour')
    expect(autoGranularity(start, start + 30 * 86_400_000, 0)).toBe('day')
    expect(autoGranularity(start, start + 1_000 * 86_400_000, 0)).toBe('week')
    expect(autoGranularity(start, start + 10_000 * 86_400_000, 0)).toBe('month')
  })
})
