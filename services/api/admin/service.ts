import { setTimeout as sleep } from 'node:timers/promises'
import type { BlobStore } from '../../shared/blobs/blob-store.ts'
import { AppError } from '../../shared/errors.ts'
import { organizationExportsPrefix } from '../../shared/exports/contract.ts'
import type { Logger } from '../../shared/logger.ts'
import type { OrganizationRepo } from './repo.ts'

export interface OrganizationServiceDeps {
  repo: OrganizationRepo
  /** How many of an organization's exports run under a lease (exports/repo.ts). */
  exports: { runningUnderLease(organizationId: string): Promise<number> }
  blobs: BlobStore
  log: Logger
  /** Drops a deleted key (by hash, hex) from this process's look-up cache at once. */
  forgetKey: (keyHashHex: string) => void
  /**
   * The export lease (TALLY_EXPORT_LEASE): within it, a running export of a deleted organization
   * has been stopped by its worker, or its worker died and its lease ended.
   */
  exportLeaseMs: number
  /** Removes the scratch files of processes that ended (an export part of a killed process). */
  sweepScratch: () => Promise<unknown>
}

/** How often a deletion looks again whether the organization's exports have stopped. */
const EXPORTS_POLL_MS = 50

export function createOrganizationService(deps: OrganizationServiceDeps) {
  const { repo, blobs, log, forgetKey } = deps

  /**
   * Waits until none of the organization's exports runs under a lease: each worker saw the
   * deletion, removed the files its job wrote and gave the job up, or died and its lease ended.
   */
  async function exportsStopped(id: string): Promise<void> {
    const deadline = Date.now() + deps.exportLeaseMs
    while ((await deps.exports.runningUnderLease(id)) > 0) {
      if (Date.now() >= deadline) {
        throw new AppError(
          503,
          'exports_stopping',
          "The organization's running exports have not stopped yet; send the DELETE again",
          { retryAfterSeconds: Math.ceil(deps.exportLeaseMs / 1000) },
        )
      }
      await sleep(EXPORTS_POLL_MS)
    }
  }

  return {
    /**
     * Deletes an organization and its data, in an order that can be repeated after any failure:
     * 1. it is recorded as deleted and its API keys are deleted, in one transaction: the keys
     *    stop working in every process, its events still on their way are dropped, and export
     *    workers stop its jobs and remove what those wrote;
     * 2. the wait for those jobs to stop (at most the export lease);
     * 3. its rows in ClickHouse;
     * 4. its prompt bodies and export files in object storage, and scratch files that processes
     *    killed mid-export left;
     * 5. its Postgres rows (the organization's row and everything that cascades from it).
     * Until step 5 the organization is still listed, so a failed deletion is retried by sending
     * the same DELETE again. False when there is no such organization.
     */
    async delete(id: string): Promise<boolean> {
      const revoked = await repo.beginDeletion(id)
      if (revoked === null) return false
      revoked.forEach(forgetKey)
      await exportsStopped(id)
      const tables = await repo.deleteClickHouseRows(id)
      const bodies = new Set(await repo.promptBodyKeys(id))
      for (const key of bodies) await blobs.delete(key)
      await blobs.deletePrefix(organizationExportsPrefix(id))
      await deps.sweepScratch()
      const removed = await repo.deleteRows(id)
      if (removed) {
        removed.keyHashes.forEach(forgetKey)
        // Versions a request already past authentication added during steps 2 to 4.
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
