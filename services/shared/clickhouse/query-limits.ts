import { randomUUID } from 'node:crypto'
import { type ClickHouseClient, ClickHouseError, type ClickHouseSettings } from '@clickhouse/client'
import type { Config } from '../config.ts'
import { AppError } from '../errors.ts'
import { counter } from '../metrics.ts'
import { clickHouseAnswer } from './errors.ts'
import { enginePriority } from './priority.ts'
import { endQuery } from './query-end.ts'

/**
 * The limits every ClickHouse query Tally runs for a caller carries (request and session queries,
 * GET of one request, the intake's look-up of re-sent ids), and the one place where ClickHouse
 * refusing a query for one of them becomes an answer: 422 naming the limit and its value.
 */
export interface QueryLimits {
  /** The limits as a SETTINGS clause of the query itself: they bind that query only. */
  clause: string
  /** The same limits as settings of the request (URL parameters), for SQL Tally did not write. */
  settings: Record<string, number | string>
  /**
   * How long Tally waits before it stops waiting on its own. ClickHouse checks its time limit
   * between granules, not inside one, so its own answer can come a little after the limit.
   */
  deadlineMs: number
  /** The 4xx for a ClickHouse error that is one of these limits; undefined for any other error. */
  exceeded(err: unknown): AppError | undefined
}

/** Past the time limit, how long Tally still waits for ClickHouse's own TIMEOUT_EXCEEDED. */
const GRACE_MS = 2_000

const NARROW = 'narrow the time window or the filter'

const exceededTotal = counter(
  'tally_query_limit_exceeded_total',
  'Caller queries refused because they exceeded a query limit',
  {
    labelNames: ['limit', 'api'],
  },
)

interface Limit {
  name: string
  /** What the caller reads: the limit, its value and what to change. */
  text: string
}

const limit = (name: string, value: string, hint: string): Limit => ({
  name,
  text: `${name} (${value}): ${hint}`,
})

interface LimitValues {
  executionTimeMs: number
  rowsToRead: number
  bytesToRead: number
  memory: number
  resultRows: number
  resultBytes: number
  threads: number
}

interface LimitWords {
  /** Which API's queries these limits bind, for the metric's `api` label. */
  api: string
  /** The status of a query refused for a limit. */
  status: number
  /** What to change when a query reads or takes too much. */
  narrow: string
  /** What to change when the query needs too much memory. */
  memory: string
  /** What to change when the answer is too large. */
  smaller: string
}

/** The limits of request and session queries: over one, 422 naming it. */
export function queryLimits(config: Config): QueryLimits {
  return limitsOf(
    {
      executionTimeMs: config.TALLY_QUERY_MAX_EXECUTION_TIME,
      rowsToRead: config.TALLY_QUERY_MAX_ROWS_TO_READ,
      bytesToRead: config.TALLY_QUERY_MAX_BYTES_TO_READ,
      memory: config.TALLY_QUERY_MAX_MEMORY,
      resultRows: config.TALLY_QUERY_MAX_RESULT_ROWS,
      resultBytes: config.TALLY_QUERY_MAX_RESULT_BYTES,
      threads: config.TALLY_QUERY_MAX_THREADS,
    },
    {
      api: 'query',
      status: 422,
      narrow: NARROW,
      memory: `${NARROW}, or ask for a smaller page`,
      smaller: 'ask for a smaller page or leave out the bodies',
    },
  )
}

/** The limits of callers' own SQL (`POST /v1/sql/query`): over one, 400 naming it. */
export function sqlLimits(config: Config): QueryLimits {
  return limitsOf(
    {
      executionTimeMs: config.TALLY_SQL_MAX_EXECUTION_TIME,
      rowsToRead: config.TALLY_SQL_MAX_ROWS_TO_READ,
      bytesToRead: config.TALLY_SQL_MAX_BYTES_TO_READ,
      memory: config.TALLY_SQL_MAX_MEMORY,
      resultRows: config.TALLY_SQL_MAX_RESULT_ROWS,
      resultBytes: config.TALLY_SQL_MAX_RESULT_BYTES,
      threads: config.TALLY_QUERY_MAX_THREADS,
    },
    {
      api: 'sql',
      status: 422,
      narrow: 'narrow the query with a WHERE on request_created_at or another column',
      memory: 'narrow the query, or aggregate into fewer groups',
      smaller:
        'select fewer rows or columns (LIMIT), or aggregate, or take the whole window as a file with POST /v1/exports',
    },
    SQL_EXTRA_SETTINGS,
  )
}

/**
 * What callers' SQL runs with besides its limits. ClickHouse checks its time limit and a KILL
 * between blocks, so a block's work bounds how long a query outlives either: blocks of 8192 rows,
 * and at most 10 million elements made by range() in one block (a lambda over range(n) per row is
 * the cheapest way to make one row cost seconds). No Hyperscan (multiMatch*): a pattern can make it
 * compile for minutes or take gigabytes. The functions whose cost per row has no bound at all
 * (editDistance and its family) are off the allowlist (services/api/sql/policy.ts).
 */
const SQL_EXTRA_SETTINGS = {
  max_block_size: 8192,
  function_range_max_elements_in_block: 10_000_000,
  allow_hyperscan: 0,
}

function limitsOf(
  values: LimitValues,
  words: LimitWords,
  extra: Record<string, number | string> = {},
): QueryLimits {
  const timeMs = values.executionTimeMs
  const time = limit('max_execution_time', `${timeMs / 1000} s`, words.narrow)
  const resultRows = `${values.resultRows} rows`
  const resultBytes = bytesText(values.resultBytes)
  // ClickHouse's error codes (src/Common/ErrorCodes.cpp) for the limits set below.
  const byCode: Record<string, Limit> = {
    '159': time, // TIMEOUT_EXCEEDED
    '160': time, // TOO_SLOW: the estimated time already exceeds max_execution_time
    '158': limit('max_rows_to_read', `${values.rowsToRead} rows`, words.narrow), // TOO_MANY_ROWS
    '307': limit('max_bytes_to_read', bytesText(values.bytesToRead), words.narrow), // TOO_MANY_BYTES
    '241': limit('max_memory_usage', bytesText(values.memory), words.memory), // MEMORY_LIMIT_EXCEEDED
    // TOO_MANY_ROWS_OR_BYTES: the code does not say which of the two.
    '396': {
      name: 'max_result_rows_or_bytes',
      text: `max_result_rows (${resultRows}) or max_result_bytes (${resultBytes}): ${words.smaller}`,
    },
  }
  const resultBytesLimit = limit('max_result_bytes', resultBytes, words.smaller)
  const refused = ({ name, text }: Limit) => {
    exceededTotal.inc({ limit: name, api: words.api })
    return new AppError(words.status, 'query_limit_exceeded', `query exceeded ${text}`)
  }
  // Numbers from the validated config only: nothing a caller sent.
  const settings: Record<string, number | string> = {
    max_execution_time: timeMs / 1000,
    timeout_overflow_mode: 'throw',
    max_rows_to_read: values.rowsToRead,
    max_bytes_to_read: values.bytesToRead,
    read_overflow_mode: 'throw',
    max_memory_usage: values.memory,
    max_result_rows: values.resultRows,
    max_result_bytes: values.resultBytes,
    result_overflow_mode: 'throw',
    max_threads: values.threads,
    ...extra,
  }
  return {
    clause: `SETTINGS ${Object.entries(settings)
      .map(([name, value]) => `${name} = ${typeof value === 'string' ? `'${value}'` : value}`)
      .join(', ')}`,
    settings,
    deadlineMs: timeMs + GRACE_MS,
    exceeded(err) {
      if (err instanceof DeadlinePassed) return refused(time)
      if (err instanceof ResultTooLarge) return refused(resultBytesLimit)
      const code = clickHouseCode(err)
      const found = code === undefined ? undefined : byCode[code]
      return found === undefined ? undefined : refused(found)
    },
  }
}

/** Tally stopped waiting for a query at its deadline. */
export class DeadlinePassed extends Error {}

/**
 * The server's summary of a finished query counts more result bytes than max_result_bytes. The
 * engine checks that limit on its blocks, where a constant column (`SELECT repeat(…) FROM
 * numbers(…)`) counts one value however many rows it has; its summary counts every row.
 */
export class ResultTooLarge extends Error {}

/** The code of an error ClickHouse answered. */
function clickHouseCode(err: unknown): string | undefined {
  return err instanceof ClickHouseError ? err.code : undefined
}

/**
 * Runs one caller's SELECT under the limits and returns its rows (JSONEachRow, unchecked: the
 * repository parses them). A limit it exceeds is a 422 naming it; another ClickHouse failure is
 * answered as errors.ts classifies it; anything else (and an internal failure) is rethrown.
 */
export async function readRows(
  client: ClickHouseClient,
  limits: QueryLimits,
  statement: {
    query: string
    query_params: Record<string, unknown>
    clickhouse_settings?: ClickHouseSettings
  },
): Promise<unknown[]> {
  const deadline = AbortSignal.timeout(limits.deadlineMs)
  const queryId = randomUUID()
  try {
    const rs = await client.query({
      ...statement,
      query: `${statement.query}\n${limits.clause}`,
      query_id: queryId,
      format: 'JSONEachRow',
      // When Tally stops waiting (the deadline), the server stops working too.
      clickhouse_settings: {
        ...statement.clickhouse_settings,
        // The priority the organization's recent use earns (the API's query gate decides it).
        ...enginePriority(),
        cancel_http_readonly_queries_on_client_close: 1,
      },
      abort_signal: deadline,
    })
    return await rs.json()
  } catch (err) {
    // Tally stopped waiting: the server may still run it. The caller's slot is held until it is gone.
    if (deadline.aborted) await endQuery(client, queryId, limits.deadlineMs)
    throw limits.exceeded(deadline.aborted ? new DeadlinePassed() : err) ?? clickHouseAnswer(err) ?? err
  }
}

export function bytesText(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`
  }
  return `${bytes} bytes`
}
