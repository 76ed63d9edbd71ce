import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import type { Logger } from '../../shared/logger.ts'
import { organizationExportsPrefix } from '../exports/service.ts'
import type { OrganizationRepo } from './repo.ts'

export interface OrganizationServiceDeps {
  repo: OrganizationRepo
  blobs: BlobStore
  log: Logger
  /** Drops a deleted key (by hash, hex) from this process's look-up cache at once. */
  forgetKey: (keyHashHex: string) => void
}

export function createOrganizationService(deps: OrganizationServiceDeps) {
  const { repo, blobs, log, forgetKey } = deps

  return {
    /**
     * Deletes an organization and its data, in an order that can be repeated after any failure:
     * 1. it is recorded as deleted and its API keys are deleted, in one transaction: the keys
     *    stop working in every process, and its events still on their way are dropped;
     * 2. its rows in ClickHouse;
     * 3. its prompt bodies and export files in object storage;
     * 4. its Postgres rows (the organization's row and everything that cascades from it).
     * Until step 4 the organization is still listed, so a failed deletion is retried by sending
     * the same DELETE again. False when there is no such organization.
     */
    async delete(id: string): Promise<boolean> {
      const revoked = await repo.beginDeletion(id)
      if (revoked === null) return false
      revoked.forEach(forgetKey)
      const tables = await repo.deleteClickHouseRows(id)
      const bodies = new Set(await repo.promptBodyKeys(id))
      for (const key of bodies) await blobs.delete(key)
      await blobs.deletePrefix(organizationExportsPrefix(id))
      const removed = await repo.deleteRows(id)
      if (removed) {
        removed.keyHashes.forEach(forgetKey)
        // Versions a request already past authentication added during steps 2 and 3.
        for (const key of removed.bodyKeys.filter((key) => !bodies.has(key))) {
          await blobs.delete(key).catch((err: unknown) => log.warn({ err, key }, 'prompt_body_delete_failed'))
        }
      }
      log.info(
        { organizationId: id, clickhouseTables: tables, promptBodies: bodies.size },
        'organization_deleted',
      )
      return true
    },
  }
}
