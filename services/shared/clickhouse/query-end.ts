import type { ClickHouseClient } from '@clickhouse/client'
import type { Logger } from '../logger.ts'
import { counter, gauge } from '../metrics.ts'

const POLL_MS = 50
/** How often a query that outlived its KILL is looked for again, and killed again. */
const WATCH_MS = 1_000
const KILL_AGAIN_EVERY = 10
const SAY_EVERY_MS = 60_000

const unconfirmed = counter(
  'tally_query_end_unconfirmed_total',
  'Queries Tally stopped waiting for whose end ClickHouse did not confirm within the deadline',
)

const outliving = gauge(
  'tally_queries_outliving_answer',
  "Queries the server still runs after Tally answered (killed, waiting for the engine to stop them); each holds its organization's slot",
)

/** Whether the server still lists the query. */
export async function isRunning(
  admin: ClickHouseClient,
  queryId: string,
  signal: AbortSignal,
): Promise<boolean> {
  const rs = await admin.query({
    query: 'SELECT count() AS n FROM system.processes WHERE query_id = {id:String}',
    format: 'JSONEachRow',
    query_params: { id: queryId },
    abort_signal: signal,
  })
  const [row] = await rs.json<{ n: number | string }>()
  return Number(row?.n ?? 0) > 0
}

/** Asks the server to kill the query: SYNC waits for it to stop, ASYNC does not. */
async function kill(admin: ClickHouseClient, queryId: string, mode: 'SYNC' | 'ASYNC', signal: AbortSignal) {
  await admin.command({
    query: `KILL QUERY WHERE query_id = {id:String} ${mode}`,
    query_params: { id: queryId },
    abort_signal: signal,
  })
}

/**
 * Ends a query Tally stopped waiting for (its deadline, a client gone) and resolves once the server
 * no longer runs it: `KILL QUERY … SYNC`, then `system.processes` until it is gone. A query that
 * stops only between blocks may outlive the KILL for a while; this waits for it up to `deadlineMs`
 * and resolves false when the server has not confirmed by then. `admin` must be allowed to kill the
 * query and read system.processes (Tally's own user).
 */
export async function endQuery(
  admin: ClickHouseClient,
  queryId: string,
  deadlineMs: number,
): Promise<boolean> {
  const until = Date.now() + deadlineMs
  const signal = () => AbortSignal.timeout(Math.max(1, until - Date.now()))
  try {
    await kill(admin, queryId, 'SYNC', signal())
    for (;;) {
      if (!(await isRunning(admin, queryId, signal()))) return true
      if (Date.now() >= until) break
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  } catch {
    // The deadline passed during a request, or the server is unreachable: not confirmed.
  }
  unconfirmed.inc()
  return false
}

/**
 * For a query that outlived `endQuery`: resolves once the server no longer lists it, asking every
 * second (and killing it again every ten), with a warning each minute it still runs. It does not
 * give up: what it tracks is a server query, and the slot it keeps is what bounds how many of
 * them an organization runs. A server that cannot be reached is asked again the same way (a
 * restarted server runs none of them).
 */
export async function endQueryEventually(
  admin: ClickHouseClient,
  queryId: string,
  log: Logger,
): Promise<void> {
  const began = Date.now()
  let said = began
  outliving.inc()
  try {
    for (let round = 1; ; round++) {
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS).unref())
      try {
        const signal = () => AbortSignal.timeout(WATCH_MS * 5)
        if (round % KILL_AGAIN_EVERY === 0) await kill(admin, queryId, 'ASYNC', signal())
        if (!(await isRunning(admin, queryId, signal()))) {
          log.info({ queryId, ms: Date.now() - began }, 'query_ended_after_answer')
          return
        }
      } catch (err) {
        log.debug({ err, queryId }, 'query_end_check_failed')
      }
      if (Date.now() - said >= SAY_EVERY_MS) {
        said = Date.now()
        log.warn({ queryId, ms: said - began }, 'query_still_running_after_kill')
      }
    }
  } finally {
    outliving.dec()
  }
}
