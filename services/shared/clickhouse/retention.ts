import type { Logger } from '../logger.ts'
import type { ClickHouseClient } from './client.ts'
import { type ClickHouseLayout, localTable, onCluster } from './cluster-ddl.ts'
import { INSERTS_TABLE, ROLLUP_TABLE } from './request-hours.ts'
import { REQUEST_TABLE } from './request-table.ts'

/**
 * The tables a request lives in, each with the time its retention counts from: the request itself
 * (its created_at) and what is derived from it per hour (sessions' hours, the metrics rollup and
 * its insert counts), so that nothing about an expired request outlives it by more than an hour.
 */
const RETAINED: readonly { table: string; time: string }[] = [
  { table: REQUEST_TABLE, time: 'toDateTime(request_created_at)' },
  { table: 'session_hours', time: 'hour' },
  { table: ROLLUP_TABLE, time: 'hour' },
  { table: INSERTS_TABLE, time: 'hour' },
]

/** The TTL clause ClickHouse reports in a table's `engine_full`, without spaces; '' when none. */
function ttlOf(engineFull: string): string {
  const clause = /\bTTL\s+(.+?)(?:\s+SETTINGS\s|$)/.exec(engineFull)?.[1] ?? ''
  return clause.replace(/\s+/g, '')
}

/**
 * Per table a request lives in, the table's name in `layout` (on a cluster the shard-local table,
 * which holds the rows), the TTL wanted for `days` ('' for none), and the statement that sets it.
 */
export function retentionStatements(layout: ClickHouseLayout, days: number | undefined) {
  return RETAINED.map(({ table, time }) => {
    const name = layout.kind === 'cluster' ? localTable(table) : table
    const wanted = days === undefined ? '' : `${time} + toIntervalDay(${days})`
    // The names and the expression are Tally's own; `days` is a validated integer.
    const sql = `ALTER TABLE ${name}${onCluster(layout)} ${wanted ? `MODIFY TTL ${wanted}` : 'REMOVE TTL'}`
    return { table: name, wanted, sql }
  })
}

/**
 * Makes ClickHouse keep requests `days` days from their created_at (TTL on each table of
 * RETAINED, rows deleted in the engine's merges; existing parts are brought under it by the
 * mutation ClickHouse starts for a changed TTL), or for good when `days` is undefined (the TTL
 * removed). Changes only what differs, so every process may call it at each start. On a cluster
 * the shard-local tables carry it: on each node with per-node DDL (`nodes`), ON CLUSTER otherwise
 * (judged by the node Tally talks to).
 */
export async function applyRetention(
  client: ClickHouseClient,
  layout: ClickHouseLayout,
  days: number | undefined,
  log: Logger,
  nodes: readonly ClickHouseClient[] = [client],
): Promise<void> {
  const statements = retentionStatements(layout, days)
  const targets = layout.kind === 'cluster' && layout.ddl === 'per-node' ? nodes : [client]
  for (const [node, target] of targets.entries()) {
    const found = await (
      await target.query({
        query:
          'SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND has({tables:Array(String)}, name)',
        query_params: { tables: statements.map((r) => r.table) },
        format: 'JSONEachRow',
      })
    ).json<{ name: string; engine_full: string }>()
    for (const { table, wanted, sql } of statements) {
      const current = ttlOf(found.find((t) => t.name === table)?.engine_full ?? '')
      if (current === wanted.replace(/\s+/g, '')) continue
      await target.command({ query: sql })
      const where = targets.length > 1 ? { node } : {}
      if (wanted) log.info({ table, ...where, days, was: current || undefined }, 'clickhouse_retention_set')
      else log.info({ table, ...where, was: current }, 'clickhouse_retention_removed')
    }
  }
}
