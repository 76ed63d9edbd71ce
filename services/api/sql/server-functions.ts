import type { ClickHouseClient } from '@clickhouse/client'
import type { FunctionRow } from './policy.ts'

/** What a server says of its functions: the input of policy.ts's deriveAllowedFunctions. */
export async function readServerFunctions(client: ClickHouseClient) {
  const query = async <T>(sql: string) =>
    (await client.query({ query: sql, format: 'JSONEachRow' })).json<T>()
  const rows = await query<FunctionRow>(
    'SELECT name, alias_to, categories, is_aggregate, case_insensitive FROM system.functions',
  )
  const combinators = (
    await query<{ name: string }>('SELECT name FROM system.aggregate_function_combinators')
  ).map((r) => r.name)
  const [{ version } = { version: '' }] = await query<{ version: string }>('SELECT version() AS version')
  return { rows, combinators, version }
}
