import { z } from 'zod'
import type { FileFormat } from '../../shared/clickhouse/file-formats.ts'
import { filterNode } from '../filters/schema.ts'
import { isoTimestamp } from '../http/envelope.ts'
import { uuidInput } from '../http/inputs.ts'
import { pageParams } from '../http/paging.ts'

export const FORMATS = ['parquet', 'csv', 'jsonl'] as const satisfies readonly FileFormat[]
export type ExportFormat = (typeof FORMATS)[number]
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

const format = z
  .enum(FORMATS, `must be one of ${FORMATS.join(', ')}`)
  .describe('parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)')

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
  status: z.enum(STATUSES, `must be one of ${STATUSES.join(', ')}`).optional(),
})

export const pageQuery = z.strictObject(pageParams)

const manifestFile = z.object({
  name: z.string().describe('File name, e.g. part-00001.parquet'),
  rows: z.number().int().describe('Rows in the file, counted from the file itself'),
  bytes: z.number().int(),
  sha256: z.string().describe('Hex SHA-256 of the file'),
})

/** The manifest stored beside the files as manifest.json, and returned by GET /v1/exports/{id}. */
export const manifest = z
  .object({
    export_id: z.uuid(),
    organization_id: z.uuid(),
    window: z.object({ from: isoTimestamp, to: isoTimestamp }),
    filter: filterNode,
    format,
    columns: z.array(z.string()).describe('Column names, in order: those of request_response_rmt'),
    files: z.array(manifestFile),
    total_rows: z.number().int().describe('Rows in all files'),
    counted_rows: z
      .number()
      .int()
      .describe("The window's rows counted after the files were written: always equal to total_rows"),
    created_at: isoTimestamp,
    finished_at: isoTimestamp,
  })
  .meta({ id: 'ExportManifest' })
export type Manifest = z.output<typeof manifest>

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
