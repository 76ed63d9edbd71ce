import { z } from 'zod'
import { format, manifest } from '../../shared/exports/contract.ts'
import { filterNode } from '../../shared/filters/schema.ts'
import { cursorInput } from '../http/cursor.ts'
import { isoTimestamp } from '../http/envelope.ts'
import { uuidInput } from '../http/inputs.ts'
import { pageParams } from '../http/paging.ts'

const PERIODS = ['hourly', 'daily'] as const
export type Period = (typeof PERIODS)[number]
const STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const

/** The earliest instant an export may start at: the intake stores nothing earlier. */
const EPOCH = Date.UTC(1970, 0, 1)

/** An instant as callers write it: ISO 8601 with an offset, from 1970 on. */
const instant = z
  .string('must be an ISO 8601 timestamp with an offset, e.g. 2026-11-01T00:00:00Z')
  .max(40, 'must be at most 40 characters')
  .pipe(z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp with an offset' }))
  .transform((text) => new Date(text))
  .refine((date) => date.getTime() >= EPOCH, 'must not be before 1970-01-01T00:00:00Z')

const filter = filterNode
  .default({})
  .describe('Filter node, as POST /v1/request/query takes it (docs/sessions.md); default: every request')

export const createExportBody = z.strictObject({
  from: instant.describe('Start of the window, included'),
  to: instant.describe('End of the window, excluded; at least TALLY_EXPORT_SETTLE_DELAY in the past'),
  filter,
  format,
})

export const createScheduleBody = z.strictObject({
  period: z
    .enum(PERIODS, `must be one of ${PERIODS.join(', ')}`)
    .describe('hourly: UTC hours; daily: UTC days'),
  format,
  filter,
  start: instant
    .optional()
    .describe(
      'Start of the first window, on a period boundary and within the last 90 days (backfill); default: the start of the current period',
    ),
})

export const idParams = z.object({ id: uuidInput })

export const listQuery = z.strictObject({
  ...pageParams,
  cursor: cursorInput.optional(),
  status: z.enum(STATUSES, `must be one of ${STATUSES.join(', ')}`).optional(),
})

export const pageQuery = z.strictObject(pageParams)

export const exportRecord = z
  .object({
    id: z.uuid(),
    status: z.enum(STATUSES).describe('queued (also between retries), running, succeeded or failed'),
    from: isoTimestamp,
    to: isoTimestamp,
    filter: filterNode,
    format,
    schedule_id: z.uuid().nullable(),
    attempts: z.number().int(),
    last_error: z
      .string()
      .nullable()
      .describe('Why the last attempt failed; for a failed export, why it failed'),
    next_attempt_at: isoTimestamp.nullable().describe('When a queued export runs next'),
    waiting_reason: z
      .string()
      .nullable()
      .describe(
        "Why a queued export is held back until next_attempt_at: its organization's bytes per hour (TALLY_EXPORT_MAX_BYTES_PER_HOUR); null otherwise",
      ),
    created_at: isoTimestamp,
    started_at: isoTimestamp.nullable(),
    finished_at: isoTimestamp.nullable(),
    manifest: manifest.nullable(),
  })
  .meta({ id: 'Export' })
export type ExportRecord = z.output<typeof exportRecord>

export const exportWithLinks = exportRecord
  .extend({
    download: z
      .object({
        expires_at: isoTimestamp,
        manifest_url: z.string(),
        files: z.array(z.object({ name: z.string(), url: z.string() })),
      })
      .nullable()
      .describe('Signed links to the manifest and the files, made afresh on every GET; null until succeeded'),
  })
  .meta({ id: 'ExportWithLinks' })

export const schedule = z
  .object({
    id: z.uuid(),
    period: z.enum(PERIODS),
    format,
    filter: filterNode,
    next_window_start: isoTimestamp.describe('Start of the next window to be given an export'),
    created_at: isoTimestamp,
  })
  .meta({ id: 'ExportSchedule' })
export type Schedule = z.output<typeof schedule>
