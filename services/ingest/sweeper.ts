import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import { deleteOrganizationRows } from '../shared/clickhouse/organization-rows.ts'
import { type DeletedOrganizations, LIVE_ANSWER_TTL_MS } from '../shared/deleted-organizations.ts'
import type { Logger } from '../shared/logger.ts'

/**
 * How long after a deletion this process may still write the organization's rows: its cached
 * "not deleted" lives that long at most when the announcement was missed (a minute's margin).
 */
const WRITTEN_LATELY_MS = LIVE_ANSWER_TTL_MS + 60_000

/**
 * Deletes again the rows of a deleted organization that this process may have written after the
 * deletion removed them: a batch checked just before the deletion was announced can land after
 * its DELETE. So when a deletion is announced, once the batches then in flight are written, its
 * rows are deleted again if this process wrote any lately; and the first time this process drops
 * an organization's events (they may have been written once before a crash, and are redelivered
 * now), too. Each is one lightweight DELETE per table.
 */
export function createDeletionSweeper(
  clickhouse: ClickHouseClient,
  deletions: DeletedOrganizations,
  log: Logger,
) {
  const inFlight = new Set<Promise<unknown>>()
  // When this process last wrote rows of each organization.
  const lastWritten = new Map<string, number>()
  const swept = new Set<string>()

  async function sweep(organizationId: string): Promise<void> {
    swept.add(organizationId)
    try {
      const tables = await deleteOrganizationRows(clickhouse, organizationId)
      log.info({ organizationId, tables }, 'deleted_organization_rows_swept')
    } catch (err) {
      // The next batch that holds its events sweeps it again.
      swept.delete(organizationId)
      throw err
    }
  }

  deletions.onDeleted((organizationId) => {
    const before = [...inFlight]
    void Promise.allSettled(before)
      .then(() => {
        const at = lastWritten.get(organizationId)
        if (at !== undefined && at > Date.now() - WRITTEN_LATELY_MS) return sweep(organizationId)
      })
      .catch((err: unknown) => log.error({ err, organizationId }, 'deleted_organization_sweep_failed'))
  })

  return {
    /** Runs a batch's check and write, so that a deletion announced meanwhile waits for it. */
    async writing<T>(write: Promise<T>): Promise<T> {
      inFlight.add(write)
      try {
        return await write
      } finally {
        inFlight.delete(write)
      }
    },

    /** Notes the organizations whose rows a batch in flight writes. */
    writes(organizationIds: Iterable<string>): void {
      const now = Date.now()
      if (lastWritten.size >= 100_000) {
        for (const [id, at] of lastWritten) if (at <= now - WRITTEN_LATELY_MS) lastWritten.delete(id)
      }
      for (const id of organizationIds) lastWritten.set(id, now)
    },

    /** Sweeps the organization, the first time this process drops its events. */
    async dropping(organizationId: string): Promise<void> {
      if (!swept.has(organizationId)) await sweep(organizationId)
    },
  }
}

export type DeletionSweeper = ReturnType<typeof createDeletionSweeper>
