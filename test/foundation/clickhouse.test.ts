import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type ClickHouseHandle, openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { REQUEST_TABLE, toRow } from '../../services/shared/clickhouse/request-table.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { SCHEMAS_DIR } from '../../services/shared/engines.ts'
import { migrateClickHouse } from '../../services/shared/migrate.ts'
import { freePort } from '../../services/shared/net.ts'
import { sampleEvent } from '../support/events.ts'
import { clickhouseEnv, engines } from '../support/harness.ts'

const log = pino({ level: 'silent' })

describe(`ClickHouse over HTTP (${engines().clickhouseSource})`, () => {
  let ch: ClickHouseHandle
  beforeAll(async () => {
    ch = await openClickHouse(loadConfig(clickhouseEnv()), log)
    await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, log)
  })
  afterAll(() => ch.close())

  it('inserts request rows and reads them back with bound parameters, one organization at a time', async () => {
    const org = randomUUID()
    const other = randomUUID()
    const events = [
      sampleEvent({ organization_id: org, model: 'gpt-4o', cost_usd: 0.5 }),
      sampleEvent({ organization_id: org, model: 'gpt-4o', cost_usd: 0.25 }),
      sampleEvent({ organization_id: other, model: 'gpt-4o', cost_usd: 9 }),
    ]
    await ch.client.insert({ table: REQUEST_TABLE, values: events.map(toRow), format: 'JSONEachRow' })
    const rs = await ch.client.query({
      query: `SELECT count() AS n, sum(cost) AS cost, any(properties['env']) AS env
              FROM ${REQUEST_TABLE} FINAL WHERE organization_id = {org:UUID} AND model = {model:String}`,
      query_params: { org, model: 'gpt-4o' },
      format: 'JSONEachRow',
    })
    expect(await rs.json()).toEqual([{ n: 2, cost: 0.75, env: 'test' }])
  })

  it('treats a bound value as data, never as SQL', async () => {
    const hostile = "x' OR 1=1 --"
    const rs = await ch.client.query({
      query: `SELECT count() AS n FROM ${REQUEST_TABLE} WHERE model = {model:String}`,
      query_params: { model: hostile },
      format: 'JSONEachRow',
    })
    expect(await rs.json()).toEqual([{ n: 0 }])
  })

  it('keeps one row for a re-ingested request once merged, and FINAL never double counts before that', async () => {
    const org = randomUUID()
    const event = sampleEvent({ organization_id: org })
    for (let i = 0; i < 3; i++) {
      await ch.client.insert({ table: REQUEST_TABLE, values: [toRow(event)], format: 'JSONEachRow' })
    }
    const count = async (final: string) => {
      const rs = await ch.client.query({
        query: `SELECT count() AS n FROM ${REQUEST_TABLE} ${final} WHERE organization_id = {org:UUID}`,
        query_params: { org },
        format: 'JSONEachRow',
      })
      return ((await rs.json()) as { n: number }[])[0]?.n
    }
    expect(await count('FINAL')).toBe(1)
    await ch.client.command({ query: `OPTIMIZE TABLE ${REQUEST_TABLE} FINAL` })
    expect(await count('')).toBe(1)
  })
})

describe('the ClickHouse client log', () => {
  it("goes into Tally's log, with its level, not to the console", async () => {
    const lines: { level: number; component?: string; module?: string; msg: string; err?: unknown }[] = []
    const captured = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const console_ = [vi.spyOn(console, 'warn'), vi.spyOn(console, 'error'), vi.spyOn(console, 'info')]
    // Nothing listens there: the client's ping fails, which it logs as a warning.
    const ch = await openClickHouse(
      loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${await freePort()}` }),
      captured,
    )
    try {
      expect((await ch.client.ping()).success).toBe(false)
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 40,
          component: 'clickhouse-client',
          module: expect.any(String),
          msg: expect.stringMatching(/ping/i),
          err: expect.objectContaining({ message: expect.stringMatching(/ECONNREFUSED/) }),
        }),
      )
      for (const spy of console_) expect(spy).not.toHaveBeenCalled()
    } finally {
      for (const spy of console_) spy.mockRestore()
      await ch.close()
    }
  })

  it('tells a request Tally aborted at debug level, and a failed one at error level', async () => {
    const lines: { level: number; component?: string; msg: string; err?: { message?: string } }[] = []
    const captured = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const ch = await openClickHouse(loadConfig(clickhouseEnv()), captured)
    try {
      const stop = new AbortController()
      const running = ch.client.query({
        query: 'SELECT sleepEachRow(0.5) FROM numbers(20) SETTINGS max_block_size = 1',
        format: 'JSONEachRow',
        abort_signal: stop.signal,
      })
      setTimeout(() => stop.abort(), 200)
      await expect(running).rejects.toThrowError('The user aborted a request.')
      await expect(
        ch.client.query({ query: 'SELECT no_such_column', format: 'JSONEachRow' }),
      ).rejects.toThrow()
      const fromClient = lines.filter((l) => l.component === 'clickhouse-client')
      expect(fromClient.map((l) => [l.level, l.err?.message?.slice(0, 27)])).toEqual([
        [20, 'The user aborted a request.'],
        [50, expect.stringMatching(/no_such_column|Unknown/)],
      ])
    } finally {
      await ch.close()
    }
  })
})
