/** What the global setup found or started, handed to every test file through vitest's provide/inject. */
export interface TestEngines {
  postgresUrl: string
  postgresSource: string
  /** A ClickHouse HTTP server: CLICKHOUSE_URL, or the embedded server the global setup started. */
  clickhouseUrl: string
  /** The restricted user callers' SQL runs as (CLICKHOUSE_SQL_URL); null when CLICKHOUSE_URL came without one. */
  clickhouseSqlUrl: string | null
  /** The read-only user the analyst door runs data teams' SQL as (CLICKHOUSE_ANALYST_URL); null when none. */
  clickhouseAnalystUrl: string | null
  clickhouseSource: string
  kafkaBrokers: string | null
  kafkaSource: string
  s3: {
    endpoint: string
    bucket: string
    region: string
    accessKeyId: string
    secretAccessKey: string
  } | null
  s3Source: string
  redisUrl: string | null
}

declare module 'vitest' {
  export interface ProvidedContext {
    engines: TestEngines
  }
}
