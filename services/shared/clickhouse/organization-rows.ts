import type { ClickHouseClient } from './client.ts'

/**
 * Deletes an organization's rows from every table of Tally's ClickHouse database that has an
 * organization_id column (lightweight DELETE: the statement returns once the rows are gone from
 * every query, FINAL included; merges drop them from disk later). Returns the tables. The admin
 * API runs it to delete an organization, and ingest again for rows it may have written meanwhile.
 */
export async function deleteOrganizationRows(
  clickhouse: ClickHouseClient,
  organizationId: string,
): Promise<string[]> {
  const result = await clickhouse.query({
    query: `SELECT name FROM system.tables
            WHERE database = currentDatabase() AND engine LIKE '%MergeTree'
              AND name IN (SELECT table FROM system.columns
                           WHERE database = currentDatabase() AND name = 'organization_id')
            ORDER BY name != {first:String}, name`,
    // The requests first: what other tables hold is derived from them (a rollup build that read
    // them before their deletion is swept by ingest, docs/metrics.md).
    query_params: { first: 'request_response_rmt' },
    format: 'JSONEachRow',
  })
  const tables = (await result.json<{ name: string }>()).map((row) => row.name)
  for (const table of tables) {
    await clickhouse.command({
      query: 'DELETE FROM {table:Identifier} WHERE organization_id = {org:UUID}',
      query_params: { table, org: organizationId },
      // Returns only once the rows are masked in every replica (ClickHouse's default, said here).
      clickhouse_settings: { lightweight_deletes_sync: '2' },
    })
  }
  return tables
}
