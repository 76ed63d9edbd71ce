import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import postgres from 'postgres'
import type { Config } from './config.ts'
import type { Logger } from './logger.ts'
import { timedSql } from './postgres-timing.ts'

export type Sql = postgres.Sql
export type TxSql = postgres.TransactionSql

export interface PostgresHandle {
  sql: Sql
  /** The connection URL (with its password: never log it). */
  url: string
  /** Where it runs, for logs: the URL's host or "embedded". */
  describe: string
  close(): Promise<void>
}

export async function openPostgres(config: Config, log: Logger): Promise<PostgresHandle> {
  if (config.DATABASE_URL) {
    const sql = connect(config.DATABASE_URL)
    return {
      sql,
      url: config.DATABASE_URL,
      describe: redactUrl(config.DATABASE_URL),
      close: () => sql.end({ timeout: 5 }),
    }
  }
  const dir = resolve(config.TALLY_DATA_DIR, 'postgres')
  // Before anything is awaited: the other engines, opened at the same time, may create
  // TALLY_DATA_DIR with a mode that keeps out the `postgres` user Postgres runs as under root.
  mkdirSync(dir, { recursive: true, mode: 0o755 })
  // Loaded only in embedded mode: it brings koffi (for flock) and the Postgres binaries.
  const { openEmbeddedPostgres } = await import('./embedded-postgres/server.ts')
  const embedded = await openEmbeddedPostgres({ dir, log })
  const sql = connect(embedded.url)
  return {
    sql,
    url: embedded.url,
    describe: embedded.describe,
    /** Ends this process's connections; stops the server only if this process owns it. */
    async close() {
      await sql.end({ timeout: 5 })
      await embedded.stop()
    },
  }
}

function connect(url: string): Sql {
  return timedSql(
    postgres(url, {
      max: 10,
      onnotice: () => {},
      // count(*) and other int8 values come back as JS numbers; none of ours exceed 2^53.
      types: {
        int8: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
      },
      transform: { undefined: null },
    }),
  )
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres'
  }
}
