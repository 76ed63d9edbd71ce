import type { ClickHouseClient } from '../shared/clickhouse/client.ts'
import { deleteOrganizationRows } from '../shared/clickhouse/organization-rows.ts'
import type { DeletedOrganizations } from '../shared/deleted-organizations.ts'
import type { Logger } from '../shared/logger.ts'

/**
 * Deletes again the rows of a deleted organization that this process may have written after the
 * deletion removed them: a batch checked just before the deletion was announced can land after
 * its DELETE. So when a deletion is announced, once the batches then in flight are written, its
 * rows are deleted again; and the first time this process drops an organization's events (they
 * may have been written once before a crash, and are redelivered now), too.
 */
export function createDeletionSweeper(
  clickhouse: ClickHouseClient,
  deletions: DeletedOrganizations,
  log: Logger,
) {
  const inFlight = new Set<Promise<unknown>>()
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
      .then(() => sweep(organizationId))
      .catch((err: unknown) => log.error({ err, organizationId }, 'deleted_organization_sweep_failed'))
  })

  return {
    /** Runs a batch's write, so that a deletion announced meanwhile sweeps after it. */
    async writing<T>(write: Promise<T>): Promise<T> {
      inFlight.add(write)
      try {
        return await write
      } finally {
        inFlight.delete(write)
      }
    },

    /** Sweeps the organization, the first time this process drops its events. */
    async dropping(organizationId: string): Promise<void> {
      if (!swept.has(organizationId)) await sweep(organizationId)
    },
  }
}
