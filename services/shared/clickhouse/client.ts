import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { type ClickHouseClient, type ClickHouseSettings, createClient } from '@clickhouse/client'
import type { Config } from '../config.ts'

export type { ClickHouseClient }

type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>

export interface ClickHouseHandle {
  client: ClickHouseClient
  /** Where it runs, for logs: the server URL or "chdb (embedded)". */
  describe: string
  embedded: boolean
  close(): Promise<void>
}

const settings: ClickHouseSettings = {
  // Counts and sums come back as JSON numbers rather than quoted strings.
  output_format_json_quote_64bit_integers: 0,
  date_time_output_format: 'iso',
}

export async function openClickHouse(config: Config): Promise<ClickHouseHandle> {
  if (config.CLICKHOUSE_URL) {
    const client = createClient({
      url: config.CLICKHOUSE_URL,
      database: config.CLICKHOUSE_DATABASE,
      clickhouse_settings: settings,
      request_timeout: 60_000,
    })
    return {
      client,
      describe: config.CLICKHOUSE_URL.replace(/\/\/[^@/]*@/, '//***@'),
      embedded: false,
      close: () => client.close(),
    }
  }
  const path = resolve(config.TALLY_DATA_DIR, 'clickhouse')
  mkdirSync(path, { recursive: true })
  // Loaded only in embedded mode: the native engine is large and one per process.
  const { createChdbConnection } = await import('chdb/connection')
  // chdb builds against its own copy of @clickhouse/client-common; the interface is the same.
  const connection = createChdbConnection({ path }) as unknown as ClientConnection
  const client = createClient({ connection, clickhouse_settings: settings })
  return { client, describe: `chdb (embedded, ${path})`, embedded: true, close: () => client.close() }
}
