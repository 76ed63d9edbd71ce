/**
 * What the API and the exporter agree on about an export, besides the `exports` and
 * `export_schedules` tables: the file formats, the manifest the exporter writes (and the API
 * shows), where the files live in the object store, and the channel that says a job is due.
 */
import { z } from 'zod'
import type { FileFormat } from '../clickhouse/file-formats.ts'
import { filterNode } from '../filters/schema.ts'
import { isoTimestamp } from '../timestamp.ts'

export const FORMATS = ['parquet', 'csv', 'jsonl'] as const satisfies readonly FileFormat[]
export type ExportFormat = (typeof FORMATS)[number]

export const format = z
  .enum(FORMATS, `must be one of ${FORMATS.join(', ')}`)
  .describe('parquet (ClickHouse Parquet), csv (CSV with a header line) or jsonl (one JSON object per line)')

/** Postgres NOTIFY channel: an export job was queued or handed back, due now. */
export const EXPORTS_CHANNEL = 'tally_exports'

/** Every export file of an organization is under this prefix (deleted with the organization). */
export const organizationExportsPrefix = (organizationId: string) => `exports/${organizationId}/`

/** Where an export's files live: under its organization's prefix. */
export const exportPrefix = (organizationId: string, exportId: string) =>
  `${organizationExportsPrefix(organizationId)}${exportId}`

export const manifestKey = (organizationId: string, exportId: string) =>
  `${exportPrefix(organizationId, exportId)}/manifest.json`

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
    columns: z
      .array(z.string())
      .describe(
        'Column names, in order: those of request_response_rmt but ingested_at (properties with their later updates applied), then scores and score_categories',
      ),
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
