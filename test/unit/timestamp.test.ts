import { describe, expect, it } from 'vitest'
import {
  atCallerOffset,
  clickHouseTime,
  fromClickHouseTime,
  isoTimestamp,
} from '../../services/shared/timestamp.ts'

const INSTANT = Date.UTC(2026, 10, 1, 12, 30, 15, 7)

describe('time, read and written in one place', () => {
  it('reads ClickHouse times as UTC, with or without a zone, whatever the machine zone', () => {
    for (const text of [
      '2026-11-01 12:30:15.007',
      '2026-11-01T12:30:15.007',
      '2026-11-01T12:30:15.007Z',
      '2026-11-01T14:30:15.007+02:00',
      '2026-11-01T07:30:15.007-0500',
    ]) {
      expect({ text, ms: fromClickHouseTime(text).getTime() }).toEqual({ text, ms: INSTANT })
    }
    expect(Number.isNaN(fromClickHouseTime('yesterday').getTime())).toBe(true)
  })

  it("writes DateTime64(3, 'UTC') text from a Date or Unix milliseconds, and reads it back", () => {
    expect(clickHouseTime(new Date(INSTANT))).toBe('2026-11-01 12:30:15.007')
    expect(clickHouseTime(INSTANT)).toBe('2026-11-01 12:30:15.007')
    expect(clickHouseTime(0)).toBe('1970-01-01 00:00:00.000')
    for (const ms of [0, INSTANT, Date.UTC(2299, 11, 31, 23, 59, 59, 999), Date.UTC(1900, 0, 1)]) {
      expect(fromClickHouseTime(clickHouseTime(ms)).getTime()).toBe(ms)
    }
    expect(() => clickHouseTime(Number.NaN)).toThrow(RangeError)
  })

  it('shows an instant at the caller offset (getTimezoneOffset convention)', () => {
    expect(atCallerOffset('2026-11-01 12:30:15.007', 0)).toBe('2026-11-01T12:30:15.007+00:00')
    expect(atCallerOffset('2026-11-01 12:30:15.007', -120)).toBe('2026-11-01T14:30:15.007+02:00')
    expect(atCallerOffset('2026-11-01T12:30:15.007Z', 330)).toBe('2026-11-01T07:00:15.007-05:30')
    // Across midnight, and the same instant whatever the offset.
    const shown = atCallerOffset('2026-11-01 23:30:00.000', -840)
    expect(shown).toBe('2026-11-02T13:30:00.000+14:00')
    expect(Date.parse(shown)).toBe(Date.UTC(2026, 10, 1, 23, 30))
  })

  it('takes ISO 8601 with an offset on the wire, and refuses it without one', () => {
    expect(isoTimestamp.decode('2026-11-01T14:30:15.007+02:00').getTime()).toBe(INSTANT)
    expect(isoTimestamp.encode(new Date(INSTANT))).toBe('2026-11-01T12:30:15.007Z')
    expect(isoTimestamp.safeDecode('2026-11-01 12:30:15').success).toBe(false)
  })
})
