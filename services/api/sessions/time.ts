/**
 * The same instant written at the caller's offset, e.g. `2026-11-01T12:00:00.000+02:00`.
 * `timezoneDifference` follows JavaScript's getTimezoneOffset(): minutes to add to local time to
 * reach UTC, so UTC+2 is -120.
 */
export function atCallerOffset(utc: string, timezoneDifference: number): string {
  // ClickHouse writes DateTime64 in UTC, with or without the Z depending on the output format.
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(utc) ? utc : `${utc.replace(' ', 'T')}Z`)
  const offset = -timezoneDifference
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, -1)
  const abs = Math.abs(offset)
  const hours = String(Math.floor(abs / 60)).padStart(2, '0')
  const minutes = String(abs % 60).padStart(2, '0')
  return `${local}${offset < 0 ? '-' : '+'}${hours}:${minutes}`
}
