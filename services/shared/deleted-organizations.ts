import type { Logger } from './logger.ts'
import { createNotifiedCache } from './notified-cache.ts'
import type { Sql, TxSql } from './postgres.ts'

/** The id of every organization whose deletion begins is announced here. */
const DELETIONS_CHANNEL = 'tally_organization_deletions'

/**
 * How long an answer "not deleted" is kept. A deletion's announcement forgets it at once, and a
 * reconnect of the listening connection forgets every answer; this bounds a missed announcement.
 */
export const LIVE_ANSWER_TTL_MS = 10 * 60_000

/**
 * Records that the organization's deletion began and tells every process. Call inside the
 * transaction that revokes its keys: from its commit on, its events are dropped wherever they are.
 */
export async function recordDeletion(tx: TxSql, organizationId: string): Promise<void> {
  await tx`insert into deleted_organizations (organization_id) values (${organizationId}) on conflict do nothing`
  await tx`select pg_notify(${DELETIONS_CHANNEL}, ${organizationId})`
}

/**
 * Which organizations were deleted, for the paths that see every event (ingest, the dispatcher)
 * and the export worker. Answers come from memory: a deleted organization is kept for good, a
 * live one for a while, and the announcement of a deletion forgets the live answer in every
 * process at once. A reconnect of the listening connection forgets every answer, and calls the
 * `onDeleted` listeners for the deletions recorded since the connection before it, which it may
 * have missed.
 */
export async function createDeletedOrganizations(sql: Sql, log: Logger) {
  const cache = await createNotifiedCache<true>(sql, log, {
    channel: DELETIONS_CHANNEL,
    name: 'deleted_organizations',
    ttlMs: 24 * 3_600_000,
    maxEntries: 100_000,
    // Long: it keeps the answers of organizations seen lately usable while Postgres is away.
    misses: { ttlMs: LIVE_ANSWER_TTL_MS, maxEntries: 200_000 },
  })
  const listeners = new Set<(organizationId: string) => void>()
  const announce = (organizationId: string) => {
    for (const listener of listeners) listener(organizationId)
  }
  // Postgres's clock when the listening connection last (re)connected.
  let connectedAt: Date | undefined
  const caughtUp = async () => {
    const [row] = await sql<{ now: Date }[]>`select now()`
    const since = connectedAt
    connectedAt = row?.now
    if (!since) return
    // A minute's margin: deleted_at is when the deleting transaction began, not when it committed.
    const missed = await sql<{ organization_id: string }[]>`
      select organization_id from deleted_organizations
      where deleted_at >= ${since}::timestamptz - interval '1 minute'`
    for (const row of missed) announce(row.organization_id)
  }
  // Registered after the cache's: a listener that asks finds the deletion already.
  const listener = await sql.listen(DELETIONS_CHANNEL, announce, () => {
    caughtUp().catch((err: unknown) => log.warn({ err }, 'deleted_organizations_catch_up_failed'))
  })

  const among = async (organizationIds: Iterable<string>): Promise<Set<string>> => {
    const found = await cache.getMany(organizationIds, async (missing) => {
      const rows = await sql<{ organization_id: string }[]>`
        select organization_id from deleted_organizations where organization_id = any(${missing}::uuid[])`
      return new Map(rows.map((row) => [row.organization_id, true as const]))
    })
    return new Set(found.keys())
  }

  return {
    /** The deleted organizations among `organizationIds`. */
    among,

    async isDeleted(organizationId: string): Promise<boolean> {
      return (await among([organizationId])).has(organizationId)
    },

    /** Calls `listener` with the id of each organization whose deletion begins, in any process. */
    onDeleted(listener: (organizationId: string) => void): () => void {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },

    async close() {
      listeners.clear()
      await listener
        .unlisten()
        .catch((err: unknown) => log.warn({ err }, 'deleted_organizations_unlisten_failed'))
      await cache.close()
    },
  }
}

export type DeletedOrganizations = Awaited<ReturnType<typeof createDeletedOrganizations>>
