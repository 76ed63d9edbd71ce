import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import type { BlobStore } from '../shared/blobs/blob-store.ts'
import { FILE_FORMATS } from '../shared/clickhouse/file-formats.ts'
import { exportPrefix, type Manifest, manifest, manifestKey } from '../shared/exports/contract.ts'
import { compileRequestFilter } from '../shared/filters/compile.ts'
import { writePart } from './files.ts'
import type { ClaimedExport } from './jobs.ts'
import { type Cursor, EXPORT_COLUMNS, type ExportQueries, type ExportScope } from './query.ts'

/** The window's rows changed while it was written: the attempt proves nothing and is retried. */
export class CountMismatch extends Error {}

/** Another worker holds the export now: this one writes nothing more. */
export class LeaseLost extends Error {}

/**
 * Runs one attempt of an export: the window's rows in files of at most `partRows` rows, each
 * streamed from ClickHouse to a local file and from there to the object store; then the window
 * is counted again and must hold exactly the rows written, or the attempt fails (CountMismatch).
 * The manifest is written last: an export without one has not succeeded.
 *
 * Files cover consecutive ranges of the sorting key (created_at, request_id): each starts after
 * the last key of the one before, so no row is in two files and none falls between. Rows are only
 * ever added or replaced under their key, so a file's range can only have gained rows since it
 * was read; the final count equal to the rows written therefore says that no range gained any.
 */
export async function runExport(
  deps: {
    queries: ExportQueries
    blobs: BlobStore
    partRows: number
    stepTimeoutMs: number
    /** Counts a stored file's bytes against the organization's bytes per hour. */
    countBytes: (bytes: number) => Promise<void>
    /** Where the parts wait for their upload: this process's scratch folder (shared/scratch.ts). */
    scratchDir: string
  },
  job: ClaimedExport,
  signal: AbortSignal,
  /** Renews the lease; false when another worker has the job now. Asked before every write. */
  holdLease: () => Promise<boolean>,
): Promise<Manifest> {
  const stillHeld = async () => {
    if (!(await holdLease())) throw new LeaseLost('the export was taken over by another worker')
    signal.throwIfAborted()
  }
  const createdAt = new Date()
  const scope: ExportScope = {
    organizationId: job.organizationId,
    from: job.from,
    to: job.to,
    // Checked when the export was created; compiled again from the stored tree.
    filter: compileRequestFilter(job.filter, { path: 'filter', organization: '{organization_id:UUID}' }),
  }
  const prefix = exportPrefix(job.organizationId, job.id)
  const dir = await mkdtemp(join(deps.scratchDir, `export-${job.id}-`))
  const files: Manifest['files'] = []
  try {
    let after: Cursor | null = null
    for (;;) {
      signal.throwIfAborted()
      const part = await deps.queries.nextPart(scope, after, deps.partRows, signal)
      if (!part) break
      const name = `part-${String(files.length + 1).padStart(5, '0')}.${FILE_FORMATS[job.format].extension}`
      const path = join(dir, name)
      const stream = await deps.queries.streamPart(scope, after, part.last, job.format, signal)
      const written = await writePart(stream, path, job.format)
      await stillHeld()
      await deps.blobs.putFile(
        `${prefix}/${name}`,
        path,
        FILE_FORMATS[job.format].contentType,
        AbortSignal.any([signal, AbortSignal.timeout(deps.stepTimeoutMs)]),
      )
      await rm(path, { force: true })
      await deps.countBytes(written.bytes)
      files.push({ name, ...written })
      after = part.last
    }
    const totalRows = files.reduce((sum, f) => sum + f.rows, 0)
    const countedRows = await deps.queries.count(scope, signal)
    if (countedRows !== totalRows) {
      throw new CountMismatch(
        `the window's rows changed while it was exported: ${totalRows} rows written, ${countedRows} counted after`,
      )
    }
    const done: Manifest = {
      export_id: job.id,
      organization_id: job.organizationId,
      window: { from: job.from, to: job.to },
      filter: job.filter,
      format: job.format,
      columns: EXPORT_COLUMNS,
      files,
      total_rows: totalRows,
      counted_rows: countedRows,
      created_at: createdAt,
      finished_at: new Date(),
    }
    await stillHeld()
    await deps.blobs.put(
      manifestKey(job.organizationId, job.id),
      Buffer.from(`${JSON.stringify(z.encode(manifest, done), null, 2)}\n`),
      'application/json',
    )
    return done
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
