import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROPERTY_UPDATE_TABLE, SCORE_TABLE } from '../../services/shared/clickhouse/annotation-tables.ts'
import { type ClickHouseHandle, openClickHouse } from '../../services/shared/clickhouse/client.ts'
import { SINGLE_NODE } from '../../services/shared/clickhouse/cluster-ddl.ts'
import {
  INSERTS_TABLE,
  ROLLUP_TABLE,
  SESSION_ROLLUP_TABLE,
} from '../../services/shared/clickhouse/request-hours.ts'
import { REQUEST_TABLE, toRow } from '../../services/shared/clickhouse/request-table.ts'
import {
  applyRetention,
  type RetentionPolicy,
  type RetentionTarget,
} from '../../services/shared/clickhouse/retention.ts'
import { loadConfig, MAX_RETENTION_DAYS } from '../../services/shared/config.ts'
import { SCHEMAS_DIR } from '../../services/shared/engines.ts'
import { migrateClickHouse } from '../../services/shared/migrate.ts'
import { sampleEvent } from '../support/events.ts'
import { clickhouseEnv } from '../support/harness.ts'
import { scoreRow } from '../support/scores.ts'
import { waitFor } from '../support/wait.ts'

const DAY = 86_400_000
const daysAgo = (days: number) => new Date(Date.now() - days * DAY)
/** A request of `organization_id` sent and completed `days` days ago, in session `session_id`. */
const agedEvent = (organization_id: string, days: number, session_id = `s${days}`) =>
  sampleEvent({ organization_id, created_at: daysAgo(days), completed_at: daysAgo(days), session_id })
const TABLES = [
  REQUEST_TABLE,
  'session_hours',
  ROLLUP_TABLE,
  SESSION_ROLLUP_TABLE,
  INSERTS_TABLE,
  SCORE_TABLE,
  PROPERTY_UPDATE_TABLE,
]
/** The instance's days only: no organization with its own. */
const days = (n: number | undefined): RetentionPolicy => ({ days: n, organizations: new Map() })

// TALLY_RETENTION_DAYS on a real ClickHouse server: the engine deletes what is older (a TTL on each
// table a request lives in), in a database of this file's own.
describe('retention (TALLY_RETENTION_DAYS)', () => {
  let ch: ClickHouseHandle
  let target: RetentionTarget
  const lines: { msg: string; table?: string; days?: number }[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  beforeAll(async () => {
    ch = await openClickHouse(
      loadConfig({ ...clickhouseEnv(), CLICKHOUSE_DATABASE: `test_${process.pid}_retention` }),
      pino({ level: 'silent' }),
    )
    await migrateClickHouse(ch.client, `${SCHEMAS_DIR}clickhouse`, pino({ level: 'silent' }))
    target = { client: ch.client, layout: SINGLE_NODE }
  })
  afterAll(async () => {
    await ch.client.command({ query: `DROP DATABASE IF EXISTS test_${process.pid}_retention` })
    await ch.close()
  })

  const ttls = async () =>
    (
      await (
        await ch.client.query({
          query:
            "SELECT name, extract(engine_full, 'TTL (.+?)(?: SETTINGS|$)') AS ttl FROM system.tables WHERE database = currentDatabase() AND has({t:Array(String)}, name) ORDER BY name",
          query_params: { t: TABLES },
          format: 'JSONEachRow',
        })
      ).json<{ name: string; ttl: string }>()
    ).map((r) => [r.name, r.ttl])
  const count = async (table: string, org: string) =>
    Number(
      (
        await (
          await ch.client.query({
            query: `SELECT count() AS n FROM ${table} WHERE organization_id = {org:UUID}`,
            query_params: { org },
            format: 'JSONEachRow',
          })
        ).json<{ n: string }>()
      )[0]?.n,
    )

  it('deletes stored requests, and their session hours, older than the days; keeps the rest; a late expired one too', async () => {
    const org = randomUUID()
    const event = (days: number, session_id: string) => agedEvent(org, days, session_id)
    // Stored while nothing is limited.
    const before = [event(45, 'old'), event(31, 'old'), event(29, 'kept'), event(1, 'kept')]
    await ch.client.insert({ table: REQUEST_TABLE, values: before.map(toRow), format: 'JSONEachRow' })
    expect(await count(REQUEST_TABLE, org)).toBe(4)

    await applyRetention(target, days(30), log)
    // By name: request_hour_inserts, request_hours, request_property_updates, request_response_rmt,
    // scores, session_hour_totals, session_hours.
    expect(await ttls()).toEqual([
      [INSERTS_TABLE, 'hour + toIntervalDay(30)'],
      [ROLLUP_TABLE, 'hour + toIntervalDay(30)'],
      [PROPERTY_UPDATE_TABLE, 'toDateTime(updated_at) + toIntervalDay(30)'],
      [REQUEST_TABLE, 'toDateTime(request_created_at) + toIntervalDay(30)'],
      [SCORE_TABLE, 'toDateTime(created_at) + toIntervalDay(30)'],
      [SESSION_ROLLUP_TABLE, 'hour + toIntervalDay(30)'],
      ['session_hours', 'hour + toIntervalDay(30)'],
    ])
    // The rows already stored: ClickHouse's mutation for the new TTL deletes the expired ones.
    await waitFor(async () => (await count(REQUEST_TABLE, org)) === 2, {
      what: 'the requests older than 30 days deleted',
      timeoutMs: 30_000,
    })
    const sessions = () =>
      ch.client
        .query({
          query:
            'SELECT DISTINCT session_id FROM session_hours WHERE organization_id = {org:UUID} ORDER BY session_id',
          query_params: { org },
          format: 'JSONEachRow',
        })
        .then((rs) => rs.json<{ session_id: string }>())
    await waitFor(async () => (await sessions()).length === 1, {
      what: 'the session hours older than 30 days deleted',
      timeoutMs: 30_000,
    })
    expect(await sessions()).toEqual([{ session_id: 'kept' }])
    await waitFor(async () => (await count(INSERTS_TABLE, org)) === 2, {
      what: 'the insert counts of hours older than 30 days deleted',
      timeoutMs: 30_000,
    })

    // Written now, beside a live one: an event already older than the days is deleted like the
    // others, by the next merge at the latest (a part whose every row is expired is not even
    // written). OPTIMIZE … FINAL merges now.
    await ch.client.insert({
      table: REQUEST_TABLE,
      values: [event(40, 'late'), event(2, 'kept')].map(toRow),
      format: 'JSONEachRow',
    })
    for (const table of [REQUEST_TABLE, 'session_hours'])
      await ch.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` })
    expect(await count(REQUEST_TABLE, org)).toBe(3)
    expect(await sessions()).toEqual([{ session_id: 'kept' }])
  })

  it('changes nothing when the days are what the tables have; another number replaces them', async () => {
    lines.length = 0
    await applyRetention(target, days(30), log)
    expect(lines.filter((l) => l.msg.startsWith('clickhouse_retention'))).toEqual([])
    await applyRetention(target, days(400), log)
    expect(lines.filter((l) => l.msg === 'clickhouse_retention_set').map((l) => [l.table, l.days])).toEqual(
      TABLES.map((t) => [t, 400]),
    )
    expect((await ttls()).map(([, ttl]) => ttl)).toEqual([
      'hour + toIntervalDay(400)',
      'hour + toIntervalDay(400)',
      'toDateTime(updated_at) + toIntervalDay(400)',
      'toDateTime(request_created_at) + toIntervalDay(400)',
      'toDateTime(created_at) + toIntervalDay(400)',
      'hour + toIntervalDay(400)',
      'hour + toIntervalDay(400)',
    ])
  })

  it('unset, keeps everything for good: the TTLs are removed', async () => {
    lines.length = 0
    await applyRetention(target, days(undefined), log)
    expect(await ttls()).toEqual(
      TABLES.map((t) => [t, '']).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    )
    expect(lines.filter((l) => l.msg === 'clickhouse_retention_removed').map((l) => l.table)).toEqual(TABLES)
  })

  it("keeps each organization's own days where it has them, the instance's elsewhere, in every table", async () => {
    const [short, long, usual] = [randomUUID(), randomUUID(), randomUUID()]
    const ages = [3, 10, 40, 400]
    const chTime = (date: Date) => date.toISOString().replace('T', ' ').replace('Z', '')
    for (const org of [short, long, usual]) {
      const events = ages.map((age) => agedEvent(org, age))
      await ch.client.insert({ table: REQUEST_TABLE, values: events.map(toRow), format: 'JSONEachRow' })
      await ch.client.insert({
        table: SCORE_TABLE,
        values: ages.map((age) => scoreRow(org, {}, chTime(daysAgo(age)))),
        format: 'JSONEachRow',
      })
    }
    const policy: RetentionPolicy = {
      days: 30,
      organizations: new Map([
        [short, 7],
        [long, 365],
      ]),
    }
    lines.length = 0
    await applyRetention(target, policy, log)
    const ttl = Object.fromEntries(await ttls())
    expect(ttl[REQUEST_TABLE]).toBe(
      `toDateTime(request_created_at) + toIntervalDay(30) WHERE organization_id NOT IN (${[short, long]
        .sort()
        .map((id) => `'${id}'`)
        .join(
          ', ',
        )}), toDateTime(request_created_at) + toIntervalDay(7) WHERE organization_id IN ('${short}'), ` +
        `toDateTime(request_created_at) + toIntervalDay(365) WHERE organization_id IN ('${long}')`,
    )
    expect(lines.filter((l) => l.msg === 'clickhouse_retention_set').map((l) => l.table)).toEqual(TABLES)

    // Kept: 3 days for `short` (7), 3 to 40 for `long` (365), 3 and 10 for `usual` (the instance's 30).
    const kept = { [short]: 1, [long]: 3, [usual]: 2 }
    for (const table of [REQUEST_TABLE, SCORE_TABLE])
      for (const [org, n] of Object.entries(kept))
        await waitFor(async () => (await count(table, org)) === n, {
          what: `${table}: ${n} rows of an organization kept`,
          timeoutMs: 30_000,
        })
    await waitFor(async () => (await count('session_hours', short)) === 1, {
      what: 'the session hours of the organization with 7 days',
      timeoutMs: 30_000,
    })

    // The same policy again changes nothing; without the organizations' own days, theirs go.
    lines.length = 0
    await applyRetention(target, policy, log)
    expect(lines.filter((l) => l.msg.startsWith('clickhouse_retention'))).toEqual([])
    await applyRetention(target, days(30), log)
    expect(Object.fromEntries(await ttls())[REQUEST_TABLE]).toBe(
      'toDateTime(request_created_at) + toIntervalDay(30)',
    )
    await applyRetention(target, days(undefined), log)
  })

  it('at the most days it takes, deletes nothing recent: the TTL stays clear of DateTime’s end in 2106', async () => {
    const org = randomUUID()
    const events = [0, 1, 400, 5_000].map((age) => agedEvent(org, age))
    await ch.client.insert({ table: REQUEST_TABLE, values: events.map(toRow), format: 'JSONEachRow' })
    const other = randomUUID()
    for (const policy of [
      days(MAX_RETENTION_DAYS),
      { days: 30, organizations: new Map([[org, MAX_RETENTION_DAYS]]) },
    ]) {
      await applyRetention(target, policy, log)
      for (const table of [REQUEST_TABLE, 'session_hours'])
        await ch.client.command({ query: `OPTIMIZE TABLE ${table} FINAL` })
      expect(await count(REQUEST_TABLE, org)).toBe(4)
      expect(await count('session_hours', org)).toBe(4)
    }
    // A row as old as the days (and one day more) goes, as any other would.
    await ch.client.insert({
      table: REQUEST_TABLE,
      values: [agedEvent(other, MAX_RETENTION_DAYS + 1)].map(toRow),
      format: 'JSONEachRow',
    })
    await applyRetention(target, days(MAX_RETENTION_DAYS), log)
    await ch.client.command({ query: `OPTIMIZE TABLE ${REQUEST_TABLE} FINAL` })
    expect(await count(REQUEST_TABLE, other)).toBe(0)
    await applyRetention(target, days(undefined), log)
  })

  it('refuses an id or a number of days that is not one before writing anything', async () => {
    const bad: [string, number][] = [
      ["x') OR 1=1 --", 7],
      [randomUUID(), 0],
      [randomUUID(), 1.5],
      [randomUUID(), MAX_RETENTION_DAYS + 1],
    ]
    for (const entry of bad)
      await expect(
        applyRetention(target, { days: 30, organizations: new Map([entry]) }, log),
      ).rejects.toThrowError(/^(not an organization id|retention days must be a whole number)/)
    expect(await ttls()).toEqual(
      TABLES.map((t) => [t, '']).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    )
  })

  it('takes whole days from 1 to 10,000', () => {
    expect(loadConfig({}).TALLY_RETENTION_DAYS).toBeUndefined()
    expect(loadConfig({ TALLY_RETENTION_DAYS: '90' }).TALLY_RETENTION_DAYS).toBe(90)
    for (const bad of ['0', '-1', '1.5', '10001', '36500', 'ninety'])
      expect(() => loadConfig({ TALLY_RETENTION_DAYS: bad })).toThrowError(/TALLY_RETENTION_DAYS/)
  })
})
