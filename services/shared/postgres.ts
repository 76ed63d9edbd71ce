import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import postgres from 'postgres'
import type { Config } from './config.ts'
import type { Logger } from './logger.ts'
import { SOCKET_ERROR_CODES } from './net.ts'
import { isTemplate, timedSql, timedTransaction } from './postgres-timing.ts'

export type Sql = postgres.Sql

/** The client transaction() hands its work: every statement runs in that transaction. */
export type TxSql = postgres.TransactionSql

export interface PostgresHandle {
  sql: Sql
  /** The connection URL (with its password: never log it). */
  url: string
  /** Where it runs, for logs: the URL's host or "embedded". */
  describe: string
  /** The embedded server this process started or attached to; absent with DATABASE_URL. */
  embedded?: {
    /** Called once if the server ends while this process still uses it. */
    onLost(listener: () => void): void
  }
  close(): Promise<void>
}

export async function openPostgres(config: Config, log: Logger): Promise<PostgresHandle> {
  const connectTimeoutMs = config.TALLY_POSTGRES_CONNECT_TIMEOUT
  if (config.DATABASE_URL) {
    const describe = redactUrl(config.DATABASE_URL)
    const sql = connect(config.DATABASE_URL, connectTimeoutMs)
    await firstConnection(sql, describe, connectTimeoutMs)
    return {
      sql,
      url: config.DATABASE_URL,
      describe,
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
  const sql = connect(embedded.url, connectTimeoutMs)
  let closing = false
  return {
    sql,
    url: embedded.url,
    describe: embedded.describe,
    embedded: { onLost: (listener) => embedded.onExit(() => closing || listener()) },
    /** Ends this process's connections; stops the server only if this process owns it. */
    async close() {
      closing = true
      await sql.end({ timeout: 5 })
      await embedded.stop()
    },
  }
}

function connect(url: string, connectTimeoutMs: number): Sql {
  return timedSql(
    postgres(url, {
      max: 10,
      // In seconds; its default, 30 s, left a start against an address that drops packets silent.
      connect_timeout: connectTimeoutMs / 1000,
      onnotice: () => {},
      // count(*) and other int8 values come back as JS numbers; none of ours exceed 2^53.
      types: {
        int8: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
      },
      transform: { undefined: null },
    }),
  )
}

/**
 * Waits for the pool's first connection, so that a start against a Postgres that does not answer
 * fails naming it, where it is and how long it waited, rather than as a migration's CONNECT_TIMEOUT.
 */
async function firstConnection(sql: Sql, describe: string, timeoutMs: number): Promise<void> {
  try {
    await sql`select 1`
  } catch (err) {
    await sql.end({ timeout: 0 })
    if ((err as { code?: unknown }).code !== 'CONNECT_TIMEOUT') throw err
    throw new Error(
      `no connection to Postgres at ${describe} within ${timeoutMs} ms (TALLY_POSTGRES_CONNECT_TIMEOUT)`,
      { cause: err },
    )
  }
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

/** The internals of a postgres.js connection this module relies on (postgres 3.4.9, src/index.js). */
interface PoolConnection {
  /** Set by sql.begin; called once, synchronously, by the pool when the connection's socket closes. */
  onclose: ((err: Error) => void) | null
}

/** A statement as postgres.js keeps it (src/query.js): it runs once `executed` is set by its first await. */
interface PendingQuery extends PromiseLike<unknown> {
  executed: boolean
  reject(err: unknown): void
}

const ignore = () => {}
/** What the work of a transaction whose connection closed answers sql.begin: nothing, ever. */
const never = () => new Promise<never>(ignore)

/** SQLSTATE admin_shutdown and crash_shutdown: the server ended the session. */
const TERMINATED = new Set(['57P01', '57P02'])

/**
 * Runs `work` in one transaction (sql.begin: COMMIT if it resolves, ROLLBACK if it throws). Use it
 * instead of `sql.begin`, which ends the process when the connection closes mid-transaction.
 *
 * When the socket of a transaction's connection closes (the backend was terminated, the network
 * dropped), sql.begin rejects with CONNECTION_CLOSED, and then, once the work settles, writes its
 * ROLLBACK (or COMMIT) to that connection: the write, scheduled with setImmediate, dereferences the
 * nulled socket (src/connection.js nextWrite), an uncaught TypeError. Any statement the work sends
 * after the close does the same, and a connection the pool has reconnected in between would run it
 * outside the transaction.
 *
 * Here the close is learnt synchronously from the pool (before any statement's rejection is seen),
 * and from then on nothing more reaches the connection: the work's pending and later statements
 * are rejected with the close's error, and its settling is not passed on to sql.begin, which has
 * already rejected and so never writes its ROLLBACK. Postgres rolls back the transaction of a
 * session that ends. The caller gets CONNECTION_CLOSED, which the API answers with 503
 * (isPostgresUnavailable).
 */
export async function transaction<T>(sql: Sql, work: (tx: TxSql) => Promise<T>): Promise<T> {
  return timedTransaction(
    begin(sql, work).catch((err: unknown) => {
      // After a backend was terminated mid-statement, postgres.js rejects the first statement on
      // the reconnected connection with the FATAL error it kept: here the BEGIN, never sent.
      // It is asked again, once; a server really shutting down refuses that one too.
      if (!beginNotSent.has(err as object)) throw err
      return begin(sql, work)
    }),
  )
}

/**
 * Runs `work` in a transaction in which the organization's creations take turns: its row is locked,
 * so a count of what it holds and the insert that count allows are never overtaken by another
 * creation of its own (nor by the exporter's schedules or the organization's deletion, which lock
 * the row too). FOR NO KEY UPDATE: inserts that only reference the row do not wait.
 */
export function inOrganizationTurn<T>(
  sql: Sql,
  organizationId: string,
  work: (tx: TxSql) => Promise<T>,
): Promise<T> {
  return transaction(sql, async (tx) => {
    await tx`select id from organizations where id = ${organizationId} for no key update`
    return work(tx)
  })
}

/**
 * Creates with `insert` in the organization's turn unless it already holds `max` rows of `table`:
 * then how many it holds.
 */
export function createCapped<T>(
  sql: Sql,
  table: 'api_keys' | 'webhooks' | 'export_schedules' | 'score_configs',
  organizationId: string,
  max: number,
  insert: (tx: TxSql) => Promise<T>,
): Promise<T | { held: number }> {
  return inOrganizationTurn(sql, organizationId, async (tx) => {
    const [{ held } = { held: 0 }] = await tx<{ held: number }[]>`
      select count(*)::int as held from ${tx(table)} where organization_id = ${organizationId}`
    return held >= max ? { held } : insert(tx)
  })
}

/** Errors of a BEGIN that postgres.js rejected without sending it. */
const beginNotSent = new WeakSet<object>()

async function begin<T>(sql: Sql, work: (tx: TxSql) => Promise<T>): Promise<T> {
  let started = false
  try {
    return (await sql.begin((tx) => {
      started = true
      return guarded(tx, work)
    })) as T
  } catch (err) {
    const code = (err as { code?: unknown }).code
    if (!started && typeof code === 'string' && TERMINATED.has(code)) beginNotSent.add(err as object)
    throw err
  }
}

async function guarded<T>(tx: postgres.TransactionSql, work: (tx: TxSql) => Promise<T>): Promise<T> {
  let connection: PoolConnection | undefined
  let closedBy: Error | undefined
  const statements = new Set<PendingQuery>()

  const refuse = (query: PendingQuery, err: Error) => {
    // Marked executed, it is never handed to the connection; its rejection is observed here so
    // that a statement nobody awaits (a fragment) raises no unhandled rejection.
    query.executed = true
    query.reject(err)
    Promise.prototype.then.call(query, undefined, ignore)
  }
  const track = (query: PendingQuery): PendingQuery => {
    if (closedBy) refuse(query, closedBy)
    else statements.add(query)
    return query
  }

  // The first statement, pipelined with the work's: postgres.js hands its connection to
  // `onexecute` (sql.begin's own hook) as it sends it, before anything else can happen on it.
  const probe = tx
    .unsafe('select 1', [], {
      onexecute: (c: PoolConnection) => {
        connection = c
        const rejectBegin = c.onclose
        c.onclose = (err: Error) => {
          closedBy = err
          for (const query of statements) refuse(query, err)
          statements.clear()
          rejectBegin?.(err)
        }
        return true
      },
    } as postgres.UnsafeQueryOptions)
    .execute()
  statements.add(probe as unknown as PendingQuery)

  let result: T
  try {
    result = await work(timedSql(guard(tx, track, () => closedBy)))
    await probe
  } catch (err) {
    if (closedBy) return never()
    throw err
  }
  if (closedBy) return never()
  // Only if postgres.js stopped calling onexecute: roll back rather than run unguarded.
  if (!connection) throw new Error('postgres.js did not report the connection of a transaction')
  statements.clear()
  return result
}

/** The transaction's client, every statement (and savepoint) of which is tracked. */
function guard(
  tx: postgres.TransactionSql,
  track: (query: PendingQuery) => PendingQuery,
  closedBy: () => Error | undefined,
): TxSql {
  return new Proxy(tx, {
    apply(target, self, args) {
      const result = Reflect.apply(target as (...a: unknown[]) => unknown, self, args)
      return isTemplate(args[0]) ? track(result as PendingQuery) : result
    },
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (key === 'unsafe' || key === 'file')
        return (...args: unknown[]) => track(value.apply(target, args) as PendingQuery)
      if (key === 'prepare') throw new Error('transaction() does not support prepared transactions')
      if (key !== 'savepoint') return value
      // savepoint([name,] fn): its SAVEPOINT is sent at once, its ROLLBACK TO once fn settles.
      return (...args: unknown[]) => {
        const closed = closedBy()
        if (closed) return Promise.reject(closed)
        const fn = args.pop() as (sp: TxSql) => Promise<unknown>
        return target.savepoint(...(args as [string]), async (sp) => {
          try {
            const result = await fn(guard(sp as unknown as TxSql, track, closedBy))
            return closedBy() ? never() : result
          } catch (err) {
            if (closedBy()) return never()
            throw err
          }
        })
      }
    },
  }) as unknown as TxSql
}

const CONNECTION_CODES = new Set([
  // Not CONNECTION_ENDED or CONNECTION_DESTROYED: those follow this process's own sql.end().
  'CONNECTION_CLOSED',
  'CONNECT_TIMEOUT',
  ...SOCKET_ERROR_CODES,
  // SQLSTATE: the server is shutting down or terminated the session, or cannot take it now.
  '57P01',
  '57P02',
  '57P03',
  '53300',
])

/** Whether `err` says Postgres could not be reached or dropped the connection: retry later (503). */
export function isPostgresUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))
}
