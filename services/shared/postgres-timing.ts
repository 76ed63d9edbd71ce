import type postgres from 'postgres'
import { histogram } from './metrics.ts'

const duration = histogram(
  'tally_postgres_query_duration_seconds',
  'Postgres statements (query) and whole transactions (transaction) run by this process',
  {
    labelNames: ['operation', 'outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  },
)

/** Whether a call of the client is a tagged-template query (a statement), not a helper. */
export const isTemplate = (arg: unknown): boolean => Array.isArray(arg) && 'raw' in (arg as object)

/** A promise-like query whose first settling is timed as `operation`. */
function timeThen<T extends PromiseLike<unknown>>(query: T, operation: string): T {
  const then = query.then
  let end: ((labels: { outcome: string }) => void) | undefined
  Object.defineProperty(query, 'then', {
    configurable: true,
    value(onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) {
      end ??= duration.startTimer({ operation })
      const stop = (outcome: string) => {
        end?.({ outcome })
        end = () => {}
      }
      return then.call(
        query,
        (value: unknown) => {
          stop('ok')
          return onFulfilled ? onFulfilled(value) : value
        },
        (err: unknown) => {
          stop('error')
          if (onRejected) return onRejected(err)
          throw err
        },
      )
    },
  })
  return query
}

/**
 * The client with its statements timed in tally_postgres_query_duration_seconds: tagged-template
 * queries (awaited) as `query`. Helpers (`sql(values)`, `sql.json`) pass through untouched.
 * Transactions are timed by transaction() in postgres.ts, which times its statements here too.
 */
export function timedSql<S extends postgres.Sql | postgres.TransactionSql>(sql: S): S {
  return new Proxy(sql, {
    apply(target, self, args) {
      const result = Reflect.apply(target as (...a: unknown[]) => unknown, self, args)
      return isTemplate(args[0]) ? timeThen(result as PromiseLike<unknown>, 'query') : result
    },
  })
}

/** A whole transaction, timed as `transaction`. */
export function timedTransaction<T>(work: Promise<T>): Promise<T> {
  const end = duration.startTimer({ operation: 'transaction' })
  return work.then(
    (value) => {
      end({ outcome: 'ok' })
      return value
    },
    (err: unknown) => {
      end({ outcome: 'error' })
      throw err
    },
  )
}
