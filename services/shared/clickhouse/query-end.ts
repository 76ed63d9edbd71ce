import type { ClickHouseClient } from '@clickhouse/client'
import { Counter } from 'prom-client'

const POLL_MS = 50

const unconfirmed = new Counter({
  name: 'tally_query_end_unconfirmed_total',
  help: 'Queries Tally stopped waiting for whose end ClickHouse did not confirm within the deadline',
})

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
  const params = { query_params: { id: queryId } }
  try {
    await admin.command({
      query: 'KILL QUERY WHERE query_id = {id:String} SYNC',
      ...params,
      abort_signal: signal(),
    })
    for (;;) {
      const rs = await admin.query({
        query: 'SELECT count() AS n FROM system.processes WHERE query_id = {id:String}',
        format: 'JSONEachRow',
        ...params,
        abort_signal: signal(),
      })
      const [row] = await rs.json<{ n: number | string }>()
      if (Number(row?.n ?? 0) === 0) return true
      if (Date.now() >= until) break
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  } catch {
    // The deadline passed during a request, or the server is unreachable: not confirmed.
  }
  unconfirmed.inc()
  return false
}
