import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseHandle } from '../../services/shared/clickhouse/client.ts'
import { endQuery, endQueryEventually, isRunning } from '../../services/shared/clickhouse/query-end.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { createLogger } from '../../services/shared/logger.ts'
import { openMigratedClickHouse } from '../support/clickhouse.ts'
import { waitFor } from '../support/wait.ts'

// A query the engine cannot stop inside one block: h3kRing's work grows with its radius, and the
// engine checks KILL between blocks only (which is why callers' SQL may not call it). As Tally's
// own user, it stands for any query that outlives its KILL.
const STUBBORN = 'SELECT length(h3kRing(599686042433355775, 200)) AS n'

describe('ending a query the engine stops only between blocks', () => {
  let ch: ClickHouseHandle
  beforeAll(async () => {
    ch = await openMigratedClickHouse()
  })
  afterAll(() => ch?.close())

  const running = (queryId: string) => isRunning(ch.client, queryId, AbortSignal.timeout(5_000))

  it('endQuery says unconfirmed when the query outlives the KILL; endQueryEventually resolves once the server ends it', async () => {
    const queryId = randomUUID()
    const query = ch.client
      .query({ query: STUBBORN, query_id: queryId, format: 'JSONEachRow' })
      .then((rs) => rs.json())
      .catch((err: unknown) => err)
    await waitFor(() => running(queryId), { what: 'the server to list the query' })

    expect(await endQuery(ch.client, queryId, 300)).toBe(false)
    expect(await running(queryId)).toBe(true)

    const log = createLogger(loadConfig({ TALLY_LOG_LEVEL: 'silent' }), 'query-end-test')
    await endQueryEventually(ch.client, queryId, log)
    expect(await running(queryId)).toBe(false)
    await query
  }, 120_000)
})
