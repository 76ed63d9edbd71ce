import { type ClickHouseClient, ClickHouseError, type ClickHouseSettings } from '@clickhouse/client'
import { Counter } from 'prom-client'
import type { Config } from '../config.ts'
import { AppError } from '../errors.ts'

/**
 * The limits every ClickHouse query Tally runs for a caller carries (request and session queries,
 * GET of one request, the intake's look-up of re-sent ids), and the one place where ClickHouse
 * refusing a query for one of them becomes an answer: 422 naming the limit and its value.
 */
export interface QueryLimits {
  /** The limits as a SETTINGS clause of the query itself: they bind that query only. */
  clause: string
  /**
   * How long Tally waits before it stops waiting on its own. ClickHouse checks its time limit
   * between granules, not inside one, so its own answer can come a little after the limit.
   */
  deadlineMs: number
  /** The 422 for a ClickHouse error that is one of these limits; undefined for any other error. */
  exceeded(err: unknown): AppError | undefined
}

/** Past the time limit, how long Tally still waits for ClickHouse's own TIMEOUT_EXCEEDED. */
const GRACE_MS = 2_000

const NARROW = 'narrow the time window or the filter'

const exceededTotal = new Counter({
  name: 'tally_query_limit_exceeded_total',
  help: 'Caller queries answered 422 because they exceeded a query limit',
  labelNames: ['limit'],
})

interface Limit {
  name: string
  /** What the caller reads: the limit, its value and what to change. */
  text: string
}

const limit = (name: string, value: string, hint = NARROW): Limit => ({
  name,
  text: `${name} (${value}): ${hint}`,
})

export function queryLimits(config: Config): QueryLimits {
  const timeMs = config.TALLY_QUERY_MAX_EXECUTION_TIME
  const time = limit('max_execution_time', `${timeMs / 1000} s`)
  const resultRows = `${config.TALLY_QUERY_MAX_RESULT_ROWS} rows`
  const resultBytes = bytesText(config.TALLY_QUERY_MAX_RESULT_BYTES)
  // ClickHouse's error codes (src/Common/ErrorCodes.cpp) for the limits set below.
  const byCode: Record<string, Limit> = {
    '159': time, // TIMEOUT_EXCEEDED
    '160': time, // TOO_SLOW: the estimated time already exceeds max_execution_time
    '158': limit('max_rows_to_read', `${config.TALLY_QUERY_MAX_ROWS_TO_READ} rows`), // TOO_MANY_ROWS
    '307': limit('max_bytes_to_read', bytesText(config.TALLY_QUERY_MAX_BYTES_TO_READ)), // TOO_MANY_BYTES
    '241': limit(
      'max_memory_usage',
      bytesText(config.TALLY_QUERY_MAX_MEMORY),
      `${NARROW}, or ask for a smaller page`,
    ), // MEMORY_LIMIT_EXCEEDED
    // TOO_MANY_ROWS_OR_BYTES: the code does not say which of the two.
    '396': {
      name: 'max_result_rows_or_bytes',
      text: `max_result_rows (${resultRows}) or max_result_bytes (${resultBytes}): ask for a smaller page or leave out the bodies`,
    },
  }
  const refused = ({ name, text }: Limit) => {
    exceededTotal.inc({ limit: name })
    return new AppError(422, 'query_limit_exceeded', `query exceeded ${text}`)
  }
  // Numbers from the validated config only: nothing a caller sent.
  const settings: Record<string, number | string> = {
    max_execution_time: timeMs / 1000,
    timeout_overflow_mode: "'throw'",
    max_rows_to_read: config.TALLY_QUERY_MAX_ROWS_TO_READ,
    max_bytes_to_read: config.TALLY_QUERY_MAX_BYTES_TO_READ,
    read_overflow_mode: "'throw'",
    max_memory_usage: config.TALLY_QUERY_MAX_MEMORY,
    max_result_rows: config.TALLY_QUERY_MAX_RESULT_ROWS,
    max_result_bytes: config.TALLY_QUERY_MAX_RESULT_BYTES,
    result_overflow_mode: "'throw'",
    max_threads: config.TALLY_QUERY_MAX_THREADS,
  }
  return {
    clause: `SETTINGS ${Object.entries(settings)
      .map(([name, value]) => `${name} = ${value}`)
      .join(', ')}`,
    deadlineMs: timeMs + GRACE_MS,
    exceeded(err) {
      if (err instanceof DeadlinePassed) return refused(time)
      const code = clickHouseCode(err)
      const found = code === undefined ? undefined : byCode[code]
      return found === undefined ? undefined : refused(found)
    },
  }
}

/** Tally stopped waiting for a query at its deadline. */
class DeadlinePassed extends Error {}

/** The code of an error ClickHouse answered. */
function clickHouseCode(err: unknown): string | undefined {
  return err instanceof ClickHouseError ? err.code : undefined
}

/**
 * Runs one caller's SELECT under the limits and returns its rows (JSONEachRow, unchecked: the
 * repository parses them). A limit it exceeds is a 422 naming it; any other failure is rethrown.
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
  try {
    const rs = await client.query({
      ...statement,
      query: `${statement.query}\n${limits.clause}`,
      format: 'JSONEachRow',
      // When Tally stops waiting (the deadline), the server stops working too.
      clickhouse_settings: {
        ...statement.clickhouse_settings,
        cancel_http_readonly_queries_on_client_close: 1,
      },
      abort_signal: deadline,
    })
    return await rs.json()
  } catch (err) {
    throw limits.exceeded(deadline.aborted ? new DeadlinePassed() : err) ?? err
  }
}

function bytesText(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`
  }
  return `${bytes} bytes`
}
