import { MAX_RETENTION_DAYS } from '../config.ts'
import type { Logger } from '../logger.ts'
import { postgresMigrationLock } from '../migrate.ts'
import { type Sql, type TxSql, transaction } from '../postgres.ts'
import { PROPERTY_UPDATE_TABLE, SCORE_TABLE } from './annotation-tables.ts'
import type { ClickHouseClient, ClickHouseHandle } from './client.ts'
import { type ClickHouseLayout, localTable, onCluster } from './cluster-ddl.ts'
import { INSERTS_TABLE, ROLLUP_TABLE, SESSION_ROLLUP_TABLE } from './request-hours.ts'
import { REQUEST_TABLE } from './request-table.ts'

/**
 * The tables a request lives in, each with the time its retention counts from: the request itself
 * (its created_at), what is derived from it per hour (sessions' hours, the metrics and sessions
 * rollups and the insert counts), so that nothing about an expired request outlives it by more than an hour, and
 * what was said of it after the fact (scores and property updates, from when they were set).
 */
const RETAINED: readonly { table: string; time: string }[] = [
  { table: REQUEST_TABLE, time: 'toDateTime(request_created_at)' },
  { table: 'session_hours', time: 'hour' },
  { table: ROLLUP_TABLE, time: 'hour' },
  { table: SESSION_ROLLUP_TABLE, time: 'hour' },
  { table: INSERTS_TABLE, time: 'hour' },
  { table: SCORE_TABLE, time: 'toDateTime(created_at)' },
  { table: PROPERTY_UPDATE_TABLE, time: 'toDateTime(updated_at)' },
]

/** How long ClickHouse keeps what an organization records. */
export interface RetentionPolicy {
  /** TALLY_RETENTION_DAYS: every organization without days of its own; undefined keeps for good. */
  days: number | undefined
  /** Organizations with days of their own (the admin API's `retention_days`), by id. */
  organizations: ReadonlyMap<string, number>
}

export const MIN_RETENTION_DAYS = 1

// Organization ids are written into the TTL clause as literals (DDL takes no query parameters); they
// come from Postgres' uuid column, and are checked again here so that nothing else can get in.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function checkedDays(days: number): number {
  if (!Number.isInteger(days) || days < MIN_RETENTION_DAYS || days > MAX_RETENTION_DAYS)
    throw new Error(`retention days must be a whole number from 1 to ${MAX_RETENTION_DAYS}, not ${days}`)
  return days
}

/**
 * The TTL of a table whose retention counts from `time` under `policy` ('' for none): the
 * instance's days for every organization but those with their own, then one rule per number of
 * days for the organizations that have it. ClickHouse deletes a row when the first rule whose
 * WHERE it meets has expired; the rules are disjoint.
 */
function ttlExpression(time: string, policy: RetentionPolicy): string {
  const byDays = new Map<number, string[]>()
  const own = [...policy.organizations.keys()].sort()
  for (const id of own) {
    if (!UUID.test(id)) throw new Error(`not an organization id: ${JSON.stringify(id)}`)
    const days = checkedDays(policy.organizations.get(id) as number)
    byDays.set(days, [...(byDays.get(days) ?? []), id])
  }
  const list = (ids: readonly string[]) => ids.map((id) => `'${id}'`).join(', ')
  const rules: string[] = []
  if (policy.days !== undefined)
    rules.push(
      `${time} + toIntervalDay(${checkedDays(policy.days)})${own.length ? ` WHERE organization_id NOT IN (${list(own)})` : ''}`,
    )
  for (const [days, ids] of [...byDays].sort(([a], [b]) => a - b))
    rules.push(`${time} + toIntervalDay(${days}) WHERE organization_id IN (${list(ids)})`)
  return rules.join(', ')
}

/** The TTL clause ClickHouse reports in a table's `engine_full`, without spaces; '' when none. */
function ttlOf(engineFull: string): string {
  const clause = /\bTTL\s+(.+?)(?:\s+SETTINGS\s|$)/.exec(engineFull)?.[1] ?? ''
  return clause.replace(/\s+/g, '')
}

/**
 * Per table a request lives in, the table's name in `layout` (on a cluster the shard-local table,
 * which holds the rows), the TTL wanted under `policy` ('' for none), and the statement that sets it.
 */
export function retentionStatements(layout: ClickHouseLayout, policy: RetentionPolicy) {
  return RETAINED.map(({ table, time }) => {
    const name = layout.kind === 'cluster' ? localTable(table) : table
    const wanted = ttlExpression(time, policy)
    // The names are Tally's own; the expression's numbers and ids are checked above.
    const sql = `ALTER TABLE ${name}${onCluster(layout)} ${wanted ? `MODIFY TTL ${wanted}` : 'REMOVE TTL'}`
    return { table: name, wanted, sql }
  })
}

/** Where retention is applied: the client, the layout, and on a per-node cluster each node's client. */
export type RetentionTarget = Pick<ClickHouseHandle, 'client' | 'layout' | 'nodes'>

/**
 * Makes ClickHouse keep what `policy` says (a TTL on each table of RETAINED; rows deleted in the
 * engine's merges; stored parts brought under a changed TTL by the mutation ClickHouse starts for
 * it), or everything for good when it says nothing (the TTLs removed). Changes only what differs, so
 * every process may call it at each start. On a cluster the shard-local tables carry it: on each
 * node with per-node DDL (`nodes`), ON CLUSTER otherwise (judged by the node Tally talks to).
 */
export async function applyRetention(
  target: RetentionTarget,
  policy: RetentionPolicy,
  log: Logger,
): Promise<void> {
  const statements = retentionStatements(target.layout, policy)
  const perNode = target.layout.kind === 'cluster' && target.layout.ddl === 'per-node'
  const clients: readonly ClickHouseClient[] = perNode ? (target.nodes ?? [target.client]) : [target.client]
  for (const [node, client] of clients.entries()) {
    const found = await (
      await client.query({
        query:
          'SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND has({tables:Array(String)}, name)',
        query_params: { tables: statements.map((r) => r.table) },
        format: 'JSONEachRow',
      })
    ).json<{ name: string; engine_full: string }>()
    for (const { table, wanted, sql } of statements) {
      const current = ttlOf(found.find((t) => t.name === table)?.engine_full ?? '')
      if (current === wanted.replace(/\s+/g, '')) continue
      await client.command({ query: sql })
      const where = clients.length > 1 ? { node } : {}
      const organizations = policy.organizations.size
      if (wanted)
        log.info(
          { table, ...where, days: policy.days, organizations, was: current || undefined },
          'clickhouse_retention_set',
        )
      else log.info({ table, ...where, was: current }, 'clickhouse_retention_removed')
    }
  }
}

/** The organizations with days of their own, from Postgres. */
async function organizationRetention(sql: Sql | TxSql): Promise<Map<string, number>> {
  const rows = await sql<{ id: string; retention_days: number }[]>`
    select id::text as id, retention_days from organizations where retention_days is not null`
  return new Map(rows.map((row) => [row.id, row.retention_days]))
}

/**
 * Keeps ClickHouse's retention what Postgres records: TALLY_RETENTION_DAYS and each organization's
 * own days. Both ways take the ClickHouse migration lock, so that processes starting together, and
 * changes made at once, set each TTL once and never from a stale list (each change makes ClickHouse
 * rewrite the stored parts' TTL information).
 */
export function retentionKeeper(
  sql: Sql,
  target: RetentionTarget,
  days: number | undefined,
  log: Logger,
  lockTimeoutMs: number,
) {
  const lock = postgresMigrationLock(sql, lockTimeoutMs)
  return {
    /** At a start: what Postgres records now. */
    apply: (): Promise<void> =>
      lock(async () =>
        applyRetention(target, { days, organizations: await organizationRetention(sql) }, log),
      ),

    /**
     * A change of an organization's days: `update` runs in a transaction, then the retention it
     * leaves is applied to ClickHouse before the transaction commits. If ClickHouse refuses or
     * cannot be reached, the transaction rolls back (a TTL changed on some tables before the
     * failure is set back by the next start or change). `update` answers null to change nothing.
     */
    change: <T>(update: (tx: TxSql) => Promise<T | null>): Promise<T | null> =>
      lock(() =>
        transaction(sql, async (tx) => {
          const result = await update(tx)
          if (result !== null)
            await applyRetention(target, { days, organizations: await organizationRetention(tx) }, log)
          return result
        }),
      ),
  }
}

export type RetentionKeeper = ReturnType<typeof retentionKeeper>
