import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshHours, toQuery } from '../../services/api/analytics/routes.ts'
import { metricsQueryBody } from '../../services/api/analytics/schema.ts'
import { sessionQueryBody, toQuery as toSessionQuery } from '../../services/api/sessions/routes.ts'
import { totalsHoursStatement } from '../../services/api/sessions/sql.ts'
import { type ClickHouseHandle, openClickHouse } from '../../services/shared/clickhouse/client.ts'
import {
  type ClickHouseLayout,
  ledgerDdl,
  localTable,
  planStatements,
} from '../../services/shared/clickhouse/cluster-ddl.ts'
import { queryLimits } from '../../services/shared/clickhouse/query-limits.ts'
import { buildStaleHours } from '../../services/shared/clickhouse/request-hours.ts'
import { applyRetention, retentionStatements } from '../../services/shared/clickhouse/retention.ts'
import {
  ensureSqlViews,
  SQL_ORGANIZATION_HEADER,
  SQL_VIEWS,
  type SqlView,
  sqlQueryId,
  sqlViewStatements,
} from '../../services/shared/clickhouse/sql-views.ts'
import { loopbackShards } from '../../services/shared/clickhouse-server/config.ts'
import type { ClickHouseServer } from '../../services/shared/clickhouse-server/handle.ts'
import { startClickHouseServer } from '../../services/shared/clickhouse-server/server.ts'
import { loadConfig } from '../../services/shared/config.ts'
import { type Engines, openEngines, SCHEMAS_DIR } from '../../services/shared/engines.ts'
import type { RequestEvent } from '../../services/shared/events/request-event.ts'
import { migrateClickHouse, readMigrations, splitStatements } from '../../services/shared/migrate.ts'
import { freePort } from '../../services/shared/net.ts'
import { createShutdown, type Shutdown } from '../../services/shared/shutdown.ts'
import { body, count, insert, sessions } from '../sessions/client.ts'
import { callApi } from '../support/api.ts'
import { insertEvents } from '../support/clickhouse.ts'
import { sampleEvent } from '../support/events.ts'
import { clickhouseEnv, engines, startTestTally, type TestTally } from '../support/harness.ts'
import { scoreRow } from '../support/scores.ts'
import { waitFor } from '../support/wait.ts'

const log = pino({ level: 'silent' })
const CI = process.env.CI === 'true' || process.env.CI === '1'
const CLUSTER = 'tally_cluster'
const DATABASE = 'tally_sharded'
const quiet = { info() {}, warn() {}, error: (obj: object, msg: string) => console.error(msg, obj) }

async function rows<T>(client: { query: ClickHouseHandle['client']['query'] }, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>()
}

async function formatted(client: ClickHouseClient, statement: string): Promise<string[]> {
  const rs = await client.query({
    query: 'SELECT formatQuerySingleLine({statement:String}) AS text',
    query_params: { statement },
    format: 'JSONEachRow',
  })
  return (await rs.json<{ text: string }>()).map((r) => r.text)
}

/** A client of its own; refusals the test expects are not logged. */
const connect = (url: string, options: Parameters<typeof createClient>[0] = {}) =>
  createClient({ url, request_timeout: 10_000, log: { level: ClickHouseLogLevel.OFF }, ...options })

/** Every statement Tally's migrations and views run, in a layout. */
async function allStatements(layout: ClickHouseLayout, database: string): Promise<string[]> {
  const tables = new Set<string>()
  const files = await readMigrations(`${SCHEMAS_DIR}clickhouse`)
  return [
    ...ledgerDdl(layout),
    ...files.flatMap((f) => planStatements(splitStatements(f.sql), layout, tables).map((s) => s.sql)),
    ...sqlViewStatements(database, layout),
  ]
}

describe('ClickHouse cluster DDL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-cluster-'))
  const servers: ClickHouseServer[] = []
  let shutdown: Shutdown
  let tally: Engines
  let single: ClickHouseHandle

  beforeAll(async () => {
    const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()])
    const [http1, tcp1, http2, tcp2] = ports as [number, number, number, number]
    const httpPorts = [http1, http2]
    // Two servers from the same libchdb, one shard each; one secrets directory: the same users.
    servers.push(
      ...(await Promise.all(
        loopbackShards(CLUSTER, [tcp1, tcp2]).map((cluster, i) =>
          startClickHouseServer({
            dataDir: join(dir, `node${cluster.macros.shard}`),
            secretsDir: join(dir, 'secrets'),
            containment: CI ? 'required' : 'auto',
            httpPort: httpPorts[i] as number,
            analystDatabase: DATABASE,
            cluster,
            log: quiet,
          }),
        ),
      )),
    )
    const [node1, node2] = servers as [ClickHouseServer, ClickHouseServer]
    // Tally as production composes it, told the cluster by its two variables.
    const config = loadConfig({
      CLICKHOUSE_URL: node1.url,
      CLICKHOUSE_SQL_URL: node1.sqlUrl,
      CLICKHOUSE_DATABASE: DATABASE,
      TALLY_CLICKHOUSE_CLUSTER: CLUSTER,
      TALLY_CLICKHOUSE_CLUSTER_NODES: `${node1.url},${node2.url}`,
      DATABASE_URL: engines().postgresUrl,
    })
    shutdown = createShutdown(log, 10_000)
    tally = await openEngines(config, log, shutdown, { postgres: true, clickhouse: true })
    // The same schema on one node, for the answers to compare with.
    single = await openClickHouse(
      loadConfig({ ...clickhouseEnv(), CLICKHOUSE_DATABASE: `single_${process.pid}` }),
      log,
    )
    await migrateClickHouse(single.client, `${SCHEMAS_DIR}clickhouse`, log)
    await ensureSqlViews(single.client, `single_${process.pid}`)
  }, 120_000)

  afterAll(async () => {
    await single?.client.command({ query: `DROP DATABASE IF EXISTS single_${process.pid}` })
    await single?.close()
    await shutdown?.run('test finished')
    await Promise.all(servers.map((s) => s.stop()))
    rmSync(dir, { recursive: true, force: true })
  })

  it('production form (ON CLUSTER, Replicated, macros) parses on the real server', async () => {
    const layout: ClickHouseLayout = {
      kind: 'cluster',
      cluster: CLUSTER,
      database: 'tally',
      ddl: 'on-cluster',
    }
    const statements = await allStatements(layout, 'tally')
    const node = (servers[0] as ClickHouseServer).url
    const client = connect(node)
    try {
      for (const statement of statements) {
        // Parsed, not run (this server has no DDL worker nor Keeper): formatQuery answers the
        // statement as the server's parser read it, and throws on one it cannot parse.
        const [parsed] = await formatted(client, statement)
        // DDL goes ON CLUSTER; the backfill INSERTs run once, through the Distributed tables.
        if (statement.startsWith('INSERT'))
          expect(parsed).toMatch(/^INSERT INTO (session_hours|request_hour_inserts) SELECT /)
        else expect(parsed, statement).toMatch(/ ON CLUSTER tally_cluster\b/)
      }
      expect(statements.join('\n')).toContain(
        "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/tally/request_response_rmt_local', '{replica}', ingested_at)",
      )
      expect(statements.join('\n')).toContain(
        "CREATE TABLE IF NOT EXISTS request_response_rmt ON CLUSTER tally_cluster AS request_response_rmt_local ENGINE = Distributed('tally_cluster', 'tally', 'request_response_rmt_local', cityHash64(organization_id, if(session_id = '', toString(request_id), session_id)))",
      )
      // Measured limit: the embedded server (a node of that cluster) has no DDL worker: it refuses to run them.
      await expect(client.command({ query: statements[0] as string })).rejects.toThrow(
        'Replicated DDL queries are disabled',
      )
      // The check can fail: a statement the server cannot parse is refused.
      await expect(formatted(client, 'CREATE TABLE x ON CLUSTER ENGINE = Distributed(')).rejects.toThrow(
        /Syntax error/,
      )
    } finally {
      await client.close()
    }
  })

  it("answers callers' SQL through the governed views as one node does, each organization its own rows only", async () => {
    const ch = tally.clickhouse as ClickHouseHandle
    const [org, other] = [randomUUID(), randomUUID()]
    const events = [org, other].flatMap((o) =>
      Array.from({ length: 24 }, (_, i) =>
        sampleEvent({
          organization_id: o,
          session_id: i % 6 === 5 ? '' : `s-${i % 5}`,
          created_at: new Date(Date.UTC(2026, 10, 1, i, i)),
          cost_usd: i / 8,
          properties: { env: i % 2 ? 'prod' : 'dev' },
        }),
      ),
    )
    const scored = events.filter((e) => e.organization_id === org).slice(0, 6)
    const scoreRows = [
      ...scored.map((e, i) =>
        scoreRow(org, { request_id: e.request_id, value: i }, '2026-11-02 00:00:00.000'),
      ),
      scoreRow(org, { target_kind: 'session', session_id: 's-1', value: 9 }, '2026-11-02 00:00:00.000'),
      scoreRow(other, { request_id: scored[0]?.request_id, value: 100 }, '2026-11-02 00:00:00.000'),
    ]
    const updates = scored.slice(0, 3).map((e) => ({
      organization_id: org,
      request_id: e.request_id,
      key: 'env',
      value: 'staging',
      updated_at: '2026-11-02 00:00:00.000',
      version: 1,
    }))
    for (const target of [ch, single]) {
      await insertEvents(target, events)
      await insertEvents(target, events.slice(0, 4)) // a redelivery: FINAL must not count it twice
      await target.client.insert({ table: 'scores', values: scoreRows, format: 'JSONEachRow' })
      await target.client.insert({
        table: 'request_property_updates',
        values: updates,
        format: 'JSONEachRow',
      })
    }
    const statements = [
      'SELECT request_id, session_id, cost, properties FROM requests ORDER BY request_id',
      'SELECT session_id, requests, cost, models FROM sessions ORDER BY session_id',
      'SELECT id, target_kind, request_id, session_id, value FROM scores ORDER BY id',
      'SELECT count() AS n, sum(cost) AS cost FROM requests',
    ]
    // As Tally's runner sends them: the restricted user, the organization in the query's id on the
    // cluster (and the header, which one node reads).
    const asCaller = async (url: string, database: string, organization: string, query: string) => {
      const client = connect(url, { database, http_headers: { [SQL_ORGANIZATION_HEADER]: organization } })
      try {
        const rs = await client.query({ query, format: 'JSONEachRow', query_id: sqlQueryId(organization) })
        return await rs.json<Record<string, unknown>>()
      } finally {
        await client.close()
      }
    }
    const singleSql = engines().clickhouseSqlUrl
    if (!singleSql) throw new Error('the single node has no restricted user')
    for (const node of servers)
      for (const query of statements) {
        const onCluster = await asCaller(node.sqlUrl, `sql_${DATABASE}`, org, query)
        expect(onCluster, query).toEqual(await asCaller(singleSql, `sql_single_${process.pid}`, org, query))
        if (query.includes('count()')) expect(onCluster).toEqual([{ n: 24, cost: 34.5 }])
      }
    const [requestRows, sessionRows, scoreAnswer] = await Promise.all(
      statements
        .slice(0, 3)
        .map((q) => asCaller((servers[1] as ClickHouseServer).sqlUrl, `sql_${DATABASE}`, org, q)),
    )
    expect(requestRows).toHaveLength(24)
    expect(requestRows?.filter((r) => (r.properties as { env: string }).env === 'staging')).toHaveLength(3)
    expect(sessionRows?.map((r) => r.session_id)).toEqual(['s-0', 's-1', 's-2', 's-3', 's-4'])
    // The other organization's score of the same request is not among them.
    expect(scoreAnswer?.map((r) => r.value).sort()).toEqual([0, 1, 2, 3, 4, 5, 9])

    // Without Tally's query id (the header alone, a client's own id, or another form) a node's
    // share of every view is empty: the organization is never taken from anything a caller sets.
    const client = connect((servers[0] as ClickHouseServer).sqlUrl, {
      database: `sql_${DATABASE}`,
      http_headers: { [SQL_ORGANIZATION_HEADER]: org },
    })
    try {
      for (const query_id of [undefined, `x-${org}`, `tally-sql-${org}.x`, `tally-sql.${org.toUpperCase()}x`])
        expect(
          await (
            await client.query({
              query: 'SELECT count() AS n FROM requests',
              format: 'JSONEachRow',
              query_id,
            })
          ).json(),
          String(query_id),
        ).toEqual([{ n: 0 }])
      // A caller's SQL cannot change the id: query_id is not a setting.
      await expect(
        client.query({ query: `SELECT count() FROM requests SETTINGS query_id = '${sqlQueryId(org)}'` }),
      ).rejects.toThrow(/Unknown setting 'query_id'/)
      // Nor read the nodes' tables themselves.
      await expect(
        client.query({ query: `SELECT count() FROM ${DATABASE}.request_response_rmt_local` }),
      ).rejects.toThrow(/Not enough privileges/)
    } finally {
      await client.close()
    }
  })

  it('with TALLY_CLICKHOUSE_CLUSTER, builds local and Distributed tables and the views on every node', async () => {
    for (const server of servers) {
      const client = connect(server.url)
      try {
        const tables = await rows<{ database: string; name: string; engine: string }>(
          client,
          `SELECT database, name, engine FROM system.tables
           WHERE database IN ('${DATABASE}', 'sql_${DATABASE}') AND name NOT LIKE 'schema_migration%' ORDER BY database, name`,
        )
        expect(tables).toEqual([
          { database: `sql_${DATABASE}`, name: '_requests', engine: 'Distributed' },
          { database: `sql_${DATABASE}`, name: '_requests_local', engine: 'View' },
          { database: `sql_${DATABASE}`, name: '_scores', engine: 'Distributed' },
          { database: `sql_${DATABASE}`, name: '_scores_local', engine: 'View' },
          { database: `sql_${DATABASE}`, name: '_sessions', engine: 'Distributed' },
          { database: `sql_${DATABASE}`, name: '_sessions_local', engine: 'View' },
          { database: `sql_${DATABASE}`, name: '_updates', engine: 'Distributed' },
          { database: `sql_${DATABASE}`, name: '_updates_local', engine: 'View' },
          { database: `sql_${DATABASE}`, name: 'requests', engine: 'View' },
          { database: `sql_${DATABASE}`, name: 'scores', engine: 'View' },
          { database: `sql_${DATABASE}`, name: 'sessions', engine: 'View' },
          { database: DATABASE, name: 'request_hour_inserts', engine: 'Distributed' },
          { database: DATABASE, name: 'request_hour_inserts_local', engine: 'AggregatingMergeTree' },
          { database: DATABASE, name: 'request_hour_inserts_mv', engine: 'MaterializedView' },
          { database: DATABASE, name: 'request_hours', engine: 'Distributed' },
          { database: DATABASE, name: 'request_hours_local', engine: 'ReplacingMergeTree' },
          { database: DATABASE, name: 'request_property_updates', engine: 'Distributed' },
          { database: DATABASE, name: 'request_property_updates_local', engine: 'ReplacingMergeTree' },
          { database: DATABASE, name: 'request_response_rmt', engine: 'Distributed' },
          { database: DATABASE, name: 'request_response_rmt_local', engine: 'ReplacingMergeTree' },
          { database: DATABASE, name: 'scores', engine: 'Distributed' },
          { database: DATABASE, name: 'scores_local', engine: 'ReplacingMergeTree' },
          { database: DATABASE, name: 'session_hour_totals', engine: 'Distributed' },
          { database: DATABASE, name: 'session_hour_totals_local', engine: 'ReplacingMergeTree' },
          { database: DATABASE, name: 'session_hours', engine: 'Distributed' },
          { database: DATABASE, name: 'session_hours_local', engine: 'AggregatingMergeTree' },
          { database: DATABASE, name: 'session_hours_mv', engine: 'MaterializedView' },
        ])
      } finally {
        await client.close()
      }
    }
  })

  it('keeps TALLY_RETENTION_DAYS and an organization’s own days on every node’s local tables, and the ON CLUSTER form parses', async () => {
    const handle = tally.clickhouse
    if (!handle) throw new Error('no ClickHouse handle')
    // Sessions 3, 10 and 40 days old of two organizations, spread over both shards.
    const [own, usual] = [randomUUID(), randomUUID()]
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000)
    const aged = [own, usual].flatMap((org) =>
      [3, 10, 40].flatMap((days) =>
        Array.from({ length: 8 }, (_, s) =>
          sampleEvent({
            organization_id: org,
            session_id: `s${days}-${s}`,
            created_at: ago(days),
            completed_at: ago(days),
          }),
        ),
      ),
    )
    await insertEvents(handle, aged)
    const stored = async (url: string, org: string) => {
      const client = connect(url, { database: DATABASE })
      try {
        const [row] = await rows<{ n: number }>(
          client,
          `SELECT toUInt32(count()) AS n FROM ${localTable('request_response_rmt')} WHERE organization_id = '${org}'`,
        )
        return row?.n ?? 0
      } finally {
        await client.close()
      }
    }
    for (const server of servers) expect(await stored(server.url, own)).toBeGreaterThan(0)
    const ttls = async (url: string) => {
      const client = connect(url)
      try {
        return await rows<{ name: string; ttl: string }>(
          client,
          `SELECT name, extract(engine_full, 'TTL (.+?)(?: SETTINGS|$)') AS ttl FROM system.tables
           WHERE database = '${DATABASE}' AND engine_full LIKE '%TTL%' ORDER BY name`,
        )
      } finally {
        await client.close()
      }
    }
    await applyRetention(handle, { days: 30, organizations: new Map([[own, 7]]) }, log)
    const rules = (time: string) =>
      `${time} + toIntervalDay(30) WHERE organization_id NOT IN ('${own}'), ${time} + toIntervalDay(7) WHERE organization_id IN ('${own}')`
    for (const server of servers)
      expect(await ttls(server.url)).toEqual([
        { name: 'request_hour_inserts_local', ttl: rules('hour') },
        { name: 'request_hours_local', ttl: rules('hour') },
        { name: 'request_property_updates_local', ttl: rules('toDateTime(updated_at)') },
        { name: 'request_response_rmt_local', ttl: rules('toDateTime(request_created_at)') },
        { name: 'scores_local', ttl: rules('toDateTime(created_at)') },
        { name: 'session_hour_totals_local', ttl: rules('hour') },
        { name: 'session_hours_local', ttl: rules('hour') },
      ])
    // On each shard: the organization with 7 days keeps its 3-day-old rows, the other (30) those
    // 3 and 10 days old.
    for (const [org, kept] of [
      [own, [3]],
      [usual, [3, 10]],
    ] as const) {
      const want = aged.filter(
        (e) => e.organization_id === org && kept.some((d) => e.session_id.startsWith(`s${d}-`)),
      )
      await waitFor(
        async () =>
          (await Promise.all(servers.map((server) => stored(server.url, org)))).reduce((a, b) => a + b) ===
          want.length,
        { what: `the rows past an organization's days deleted on both shards`, timeoutMs: 30_000 },
      )
    }
    await applyRetention(handle, { days: undefined, organizations: new Map() }, log)
    for (const server of servers) expect(await ttls(server.url)).toEqual([])
    // Production DDL: one statement per table, ON CLUSTER, parsed by the server (it cannot run it).
    const client = connect((servers[0] as ClickHouseServer).url)
    try {
      const layout: ClickHouseLayout = {
        kind: 'cluster',
        cluster: CLUSTER,
        database: 'tally',
        ddl: 'on-cluster',
      }
      for (const { sql } of retentionStatements(layout, { days: 90, organizations: new Map([[own, 7]]) })) {
        const [parsed] = await formatted(client, sql)
        expect(parsed).toMatch(
          /^ALTER TABLE \w+_local ON CLUSTER tally_cluster \(MODIFY TTL .+ \+ toIntervalDay\(90\) WHERE organization_id NOT IN \('[0-9a-f-]{36}'\), .+ \+ toIntervalDay\(7\) WHERE organization_id IN \('[0-9a-f-]{36}'\)\)$/,
        )
      }
    } finally {
      await client.close()
    }
  })
  it('refuses to migrate a database built for the other layout', async () => {
    // The cluster's database, opened as one node: its tables are Distributed.
    const client = connect((servers[1] as ClickHouseServer).url, { database: DATABASE })
    try {
      await expect(migrateClickHouse(client, `${SCHEMAS_DIR}clickhouse`, log)).rejects.toThrow(
        // The first of its tables by name.
        'clickhouse table request_hour_inserts is Distributed: the database was built for a cluster, and TALLY_CLICKHOUSE_CLUSTER is unset',
      )
    } finally {
      await client.close()
    }
    // One node's database, opened as a cluster.
    const layout: ClickHouseLayout = {
      kind: 'cluster',
      cluster: CLUSTER,
      database: DATABASE,
      ddl: 'per-node',
    }
    await expect(
      migrateClickHouse(single.client, `${SCHEMAS_DIR}clickhouse`, log, { layout }),
    ).rejects.toThrow(
      // The first of its tables by name.
      'clickhouse table request_hour_inserts is AggregatingMergeTree: the database was built for one node, and TALLY_CLICKHOUSE_CLUSTER is set',
    )
  })

  it("puts a session's rows on one shard, and answers session queries as one node does", async () => {
    const ch = tally.clickhouse as ClickHouseHandle
    const org = randomUUID()
    const events: RequestEvent[] = []
    for (let s = 0; s < 12; s++)
      for (let r = 0; r < 3; r++)
        events.push(
          sampleEvent({
            organization_id: org,
            session_id: `session-${s}`,
            created_at: new Date(Date.UTC(2026, 10, 1, s, r)),
            cost_usd: s + r / 10,
            model: r === 0 ? 'gpt-4o' : 'gpt-4o-mini',
          }),
        )
    // Requests without a session, and a re-sent request (the same id and created_at, newer row).
    events.push(...[0, 1, 2, 3].map(() => sampleEvent({ organization_id: org, session_id: '' })))
    const resent = { ...(events[0] as RequestEvent), cost_usd: 99 }
    for (const target of [ch, single]) {
      await insertEvents(target, events)
      await insertEvents(target, [resent])
    }
    // No flush: Tally's client inserts in the foreground, so the rows are on their shards once
    // the insert returned (distributed_foreground_insert).

    const perNode = await Promise.all(
      servers.map(async (server) => {
        const client = connect(server.url, { database: DATABASE })
        try {
          return await rows<{ session_id: string; n: number }>(
            client,
            `SELECT session_id, toUInt32(count()) AS n FROM ${localTable('request_response_rmt')}
             WHERE organization_id = '${org}' AND session_id != '' GROUP BY session_id`,
          )
        } finally {
          await client.close()
        }
      }),
    )
    const placed = perNode.map((r) => r.map((s) => s.session_id))
    // Both shards hold sessions, and no session is on both.
    expect(placed[0]?.length).toBeGreaterThan(0)
    expect(placed[1]?.length).toBeGreaterThan(0)
    expect([...(placed[0] ?? []), ...(placed[1] ?? [])].sort()).toEqual(
      Array.from({ length: 12 }, (_, s) => `session-${s}`).sort(),
    )

    // The governed view's own SELECT (one organization's sessions, FINAL), run as Tally's user with
    // the organization's header, on the cluster and on one node.
    const sessionsView = SQL_VIEWS.find((v) => v.name === 'sessions') as SqlView
    const sessions = async (url: string, database: string) => {
      const client = connect(url, {
        database,
        http_headers: { [SQL_ORGANIZATION_HEADER]: org },
        clickhouse_settings: { allow_get_client_http_header: 1 },
      })
      try {
        return await rows<Record<string, unknown>>(
          client,
          `SELECT session_id, requests, round(cost, 6) AS cost, first_request_at, last_request_at, arraySort(models) AS models
           FROM (${sessionsView.select(database)}) ORDER BY session_id`,
        )
      } finally {
        await client.close()
      }
    }
    const onCluster = await sessions((servers[0] as ClickHouseServer).url, DATABASE)
    const onOne = await sessions(engines().clickhouseUrl, `single_${process.pid}`)
    expect(onCluster).toHaveLength(12)
    expect(onCluster).toEqual(onOne)
    // The re-sent request replaced its first copy on its shard (FINAL), as on one node.
    expect(onCluster.find((s) => s.session_id === 'session-0')?.cost).toBeCloseTo(99 + 0.1 + 0.2, 6)

    // The rollup the materialized view keeps on each shard, read through its Distributed table.
    const hours = `SELECT session_id, min(first_request_at) AS first, max(last_request_at) AS last
      FROM session_hours WHERE organization_id = '${org}' GROUP BY session_id ORDER BY session_id`
    expect(await rows(ch.client, hours)).toEqual(await rows(single.client, hours))
  })
  it("answers the API's session pages and counts on the cluster as on one node", async () => {
    const node1 = servers[0] as ClickHouseServer
    // The whole of Tally in this process on the cluster, and one on a single node, sharing Postgres.
    const onCluster = await startTestTally({
      env: {
        CLICKHOUSE_URL: node1.url,
        CLICKHOUSE_SQL_URL: node1.sqlUrl,
        CLICKHOUSE_ANALYST_URL: '',
        CLICKHOUSE_DATABASE: 'tally_api',
        TALLY_CLICKHOUSE_CLUSTER: CLUSTER,
        TALLY_CLICKHOUSE_CLUSTER_NODES: servers.map((s) => s.url).join(','),
      },
    })
    const onOne = await startTestTally()
    try {
      const org = await onCluster.newOrg()
      const events = Array.from({ length: 30 }, (_, i) =>
        sampleEvent({
          organization_id: org.organizationId,
          session_id: i % 10 === 9 ? '' : `s-${i % 7}`,
          session_name: `name ${i % 7}`,
          created_at: new Date(Date.UTC(2026, 10, 1, i, i)),
          // Eighths: sums are exact whatever order the shards add them in.
          cost_usd: i / 8,
          latency_ms: 100 + i,
          user_id: `u${i % 3}`,
          model: ['gpt-4o', 'gpt-4o-mini', 'claude', 'mistral'][i % 4] as string,
        }),
      )
      for (const tally of [onCluster, onOne]) {
        await insert(tally, events)
        // Written again, as a redelivery does: FINAL must not count it twice.
        await insert(tally, events.slice(0, 5))
      }
      const page = await sessions(onCluster, org, body())
      expect(page).toHaveLength(7)
      expect(page).toEqual(await sessions(onOne, org, body()))
      expect(await count(onCluster, org, body())).toBe(await count(onOne, org, body()))
      const byCost = body({ sort: { total_cost: 'desc' } })
      expect(await sessions(onCluster, org, byCost)).toEqual(await sessions(onOne, org, byCost))
      // Callers' SQL (POST /v1/sql/query) through the governed views, as on one node.
      const sql = async (tally: TestTally, statement: string) => {
        const res = await callApi(tally.app, 'POST', '/v1/sql/query', { as: org, body: { sql: statement } })
        expect(res.status, res.error ?? '').toBe(200)
        // Everything but how long it took.
        return { ...res.data, statistics: undefined }
      }
      for (const statement of [
        'SELECT session_id, requests, cost, models FROM sessions ORDER BY session_id',
        'SELECT model, count() AS n, sum(cost) AS cost FROM requests GROUP BY model ORDER BY model',
        'SELECT request_id, user_id FROM requests ORDER BY request_id LIMIT 5',
      ])
        expect(await sql(onCluster, statement), statement).toEqual(await sql(onOne, statement))
      expect((await sql(onCluster, 'SELECT count() AS n FROM requests')).rows).toEqual([{ n: '30' }])
      // Metrics' top N of a dimension over the whole organization, not per shard.
      const metricsBody = {
        timeFilter: { startTimeUnixMs: Date.UTC(2026, 10, 1), endTimeUnixMs: Date.UTC(2026, 10, 3) },
        measures: ['cost_sum', 'count', 'latency_p95'],
        dimensions: ['model'],
        limit: 2,
      }
      const metrics = async (tally: TestTally) => {
        const res = await callApi(tally.app, 'POST', '/v1/metrics/query', { as: org, body: metricsBody })
        expect(res.status, res.error ?? '').toBe(200)
        return res.data
      }
      const top = await metrics(onCluster)
      expect(top.series.length).toBeGreaterThan(1)
      expect(top).toEqual(await metrics(onOne))
      // The metrics rollup built on the cluster (through its Distributed tables) answers the same.
      const fresh = async (tally: TestTally) => {
        const { query } = toQuery(org.organizationId, metricsQueryBody.parse(metricsBody))
        return (await freshHours(tally.clickhouse, queryLimits(tally.config), query))?.length
      }
      expect(await fresh(onCluster)).toBe(0)
      const round = { horizonMs: 3 * 86_400_000, settleMs: 0, maxHours: 1000, maxHoursPerOrg: 1000 }
      const limits = { statementTimeoutMs: 60_000, memoryBytes: 2 ** 30 }
      for (
        let i = 0;
        i < 5 &&
        (await buildStaleHours(onCluster.clickhouse, { ...round, ...limits }, { now: Date.UTC(2026, 10, 4) }))
          .built > 0;
        i += 1
      ) {}
      // 30 requests, one a hour from 00:00 on the 1st.
      expect(await fresh(onCluster)).toBe(30)
      expect(await metrics(onCluster)).toEqual(top)
      // So does the sessions rollup, built in the same rounds: sorted by cost, count or latency,
      // the cluster's pages read it and equal the single node's, which reads the requests.
      const statement = totalsHoursStatement(
        toSessionQuery(org.organizationId, sessionQueryBody.parse(byCost)),
      )
      if (!statement) throw new Error('a sort by cost reads the sessions rollup')
      const [hours] = await (await onCluster.clickhouse.query({ ...statement, format: 'JSONEachRow' })).json<{
        hours: number[]
      }>()
      expect(hours?.hours).toHaveLength(30)
      for (const sort of [{ total_cost: 'desc' }, { total_requests: 'asc' }, { avg_latency: 'desc' }]) {
        const sorted = body({ sort })
        expect(await sessions(onCluster, org, sorted)).toEqual(await sessions(onOne, org, sorted))
      }
      // And the count of sessions passing a session-level condition.
      const costly = body({ filter: { sessions_request_response_rmt: { session_total_cost: { gte: 1 } } } })
      expect(await count(onCluster, org, costly)).toBeGreaterThan(0)
      expect(await count(onCluster, org, costly)).toBe(await count(onOne, org, costly))
    } finally {
      await onOne.close()
      await onCluster.close()
    }
  })
})
