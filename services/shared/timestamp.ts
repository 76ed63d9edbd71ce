import { z } from 'zod'

/**
 * Time, read and written in one place: the API's ISO 8601 timestamps, ClickHouse's
 * DateTime64(3, 'UTC') text, and an instant shown at a caller's UTC offset.
 */

/** A timestamp: a Date in code, an ISO 8601 string on the wire (the API's answers, stored JSON). */
export const isoTimestamp = z.codec(z.iso.datetime({ offset: true }), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
})

/**
 * The range of a DateTime64(3, 'UTC') (1900-01-01 to 2299-12-31, in Unix milliseconds): every time a
 * caller may name in a filter, a window or a cursor. Outside it ClickHouse would clamp, not refuse.
 */
export const TIME_RANGE = {
  minMs: Date.UTC(1900, 0, 1),
  maxMs: Date.UTC(2299, 11, 31, 23, 59, 59, 999),
  first: '1900-01-01',
  last: '2299-12-31',
} as const

const HAS_ZONE = /[zZ]|[+-]\d\d:?\d\d$/

/**
 * A time ClickHouse answered, as a Date. ClickHouse writes DateTime64 in UTC, with or without a
 * zone depending on the output format (`2026-11-01 12:00:00.000`, `2026-11-01T12:00:00.000Z`):
 * text without one is read as UTC, never as the machine's local time. Invalid Date when the text
 * is not a time.
 */
export function fromClickHouseTime(text: string): Date {
  return new Date(HAS_ZONE.test(text) ? text : `${text.replace(' ', 'T')}Z`)
}

/**
 * A DateTime64(3, 'UTC') value as ClickHouse reads it in a query parameter or a JSON row:
 * `2026-11-01 12:00:00.000`, always UTC, millisecond precision.
 */
export function clickHouseTime(at: Date | number): string {
  const iso = (typeof at === 'number' ? new Date(at) : at).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, -1)}`
}

/**
 * The same instant written at the caller's offset, e.g. `2026-11-01T12:00:00.000+02:00`, from a
 * ClickHouse time (see {@link fromClickHouseTime}) or any ISO 8601 text.
 * `timezoneDifference` follows JavaScript's getTimezoneOffset(): minutes to add to local time to
 * reach UTC, so UTC+2 is -120.
 */
export function atCallerOffset(utc: string, timezoneDifference: number): string {
  const ms = fromClickHouseTime(utc).getTime()
  const offset = -timezoneDifference
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1)
  const abs = Math.abs(offset)
  const hours = String(Math.floor(abs / 60)).padStart(2, '0')
  const minutes = String(abs % 60).padStart(2, '0')
  return `${local}${offset < 0 ? '-' : '+'}${hours}:${minutes}`
}
