import { randomUUID } from 'node:crypto'
import { type ClickHouseClient, ClickHouseError, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SQL_ORGANIZATION_HEADER, sqlViewsDatabase } from '../../services/shared/clickhouse/sql-views.ts'
import { engines, type TestOrg, type TestTally } from '../support/harness.ts'
import { type ScoreRow, scoreRow } from '../support/scores.ts'
import { SECRET, sqlQuery, startWithTwoOrganizations } from './fixtures.ts'

/**
 * The `scores` view and the effective `properties` of `requests`: one organization's live scores
 * only (latest version of each, deleted ones hidden), and properties set after the fact applied.
 * Rows go straight into ClickHouse (JSONEachRow, as the ingest writes them).
 */

/** What only the second organization's scores and property updates carry. */
const SECRET_SCORE = {
  name: 'secret-score-name-b',
  comment: 'SECRET-SCORE-COMMENT-B',
  category: 'secret-category-b',
  property: 'SECRET-PROPERTY-VALUE-B',
} as const

const score = (organizationId: string, fields: Partial<ScoreRow>) =>
  scoreRow(organizationId, fields, '2026-11-03 10:00:00.000')

describe('the scores view and effective properties', () => {
  let tally: TestTally
  let a: TestOrg
  let b: TestOrg
  /** A's requests in time order: two in s-1, one in s-2. */
  let mine: { request_id: string; session_id: string }[]
  let theirs: string[]
  const ids = {
    plain: randomUUID(),
    upserted: randomUUID(),
    deleted: randomUUID(),
    session: randomUUID(),
    category: randomUUID(),
    foreign: randomUUID(),
    unknown: randomUUID(),
  }

  const db = () => tally.config.CLICKHOUSE_DATABASE
  const insert = async (table: string, values: Record<string, unknown>[]) => {
    // One insert per row: each its own part, so that FINAL, not a merge, collapses versions.
    for (const row of values) await tally.clickhouse.insert({ table, values: [row], format: 'JSONEachRow' })
  }

  beforeAll(async () => {
    ;({ tally, a, b } = await startWithTwoOrganizations())
    const listed = await sqlQuery(tally, a, {
      sql: 'SELECT toString(request_id) AS request_id, session_id FROM requests ORDER BY request_created_at',
    })
    mine = listed.data.rows
    const rs = await tally.clickhouse.query({
      query:
        'SELECT toString(request_id) AS id FROM request_response_rmt FINAL WHERE organization_id = {org:UUID}',
      query_params: { org: b.organizationId },
      format: 'JSONEachRow',
    })
    theirs = (await rs.json<{ id: string }>()).map((r) => r.id)
    expect(mine).toHaveLength(3)
    expect(theirs).toHaveLength(2)
    const [r1, r2, r3] = mine.map((r) => r.request_id) as [string, string, string]
    const [b1] = theirs as [string]
    const A = a.organizationId
    const B = b.organizationId
    await insert('scores', [
      score(A, { id: ids.plain, request_id: r1, value: 0.75, comment: 'good' }),
      // An upsert: three versions, written apart; the latest shows, once.
      score(A, { id: ids.upserted, request_id: r2, name: 'accuracy', value: 0.1, version: 1 }),
      score(A, { id: ids.upserted, request_id: r2, name: 'accuracy', value: 0.9, version: 3 }),
      score(A, { id: ids.upserted, request_id: r2, name: 'accuracy', value: 0.5, version: 2 }),
      // Deleted: a live version, then its tombstone.
      score(A, { id: ids.deleted, request_id: r3, name: 'toxicity', value: 1, version: 1 }),
      score(A, { id: ids.deleted, request_id: r3, name: 'toxicity', value: 1, version: 2, is_deleted: 1 }),
      score(A, {
        id: ids.session,
        target_kind: 'session',
        session_id: 's-2',
        name: 'resolved',
        data_type: 'boolean',
        value: 1,
        source: 'annotation',
      }),
      score(A, {
        id: ids.category,
        request_id: r3,
        name: 'topic',
        data_type: 'categorical',
        string_value: 'billing',
        source: 'eval',
      }),
      // A's score of B's request id: it must not learn B's session through the look-up.
      score(A, { id: ids.foreign, request_id: b1, name: 'probe' }),
      // A's score of a request nobody stored.
      score(A, { id: ids.unknown, request_id: randomUUID(), name: 'orphan' }),
      // B's own scores, of its request and its session, and of A's request id.
      score(B, {
        request_id: b1,
        name: SECRET_SCORE.name,
        comment: SECRET_SCORE.comment,
        data_type: 'categorical',
        string_value: SECRET_SCORE.category,
      }),
      score(B, { target_kind: 'session', session_id: SECRET.session, name: SECRET_SCORE.name }),
      score(B, { request_id: r1, name: SECRET_SCORE.name, comment: SECRET_SCORE.comment }),
    ])
    const update = (org: string, request: string, key: string, value: string, version: number) => ({
      organization_id: org,
      request_id: request,
      key,
      value,
      updated_at: '2026-11-03 11:00:00.000',
      version,
    })
    await insert('request_property_updates', [
      update(A, r1, 'env', 'staging', 1),
      update(A, r1, 'env', 'prod', 2),
      update(A, r1, 'reviewed', 'yes', 1),
      // B writing over A's request id: never A's.
      update(B, r1, 'env', SECRET_SCORE.property, 9),
      update(B, r2, 'leak', SECRET_SCORE.property, 1),
      update(B, b1, 'env', SECRET_SCORE.property, 1),
    ])
  })
  afterAll(() => tally?.close())

  const leaks = () => [
    b.organizationId,
    SECRET.model,
    SECRET.user,
    SECRET.session,
    SECRET.body,
    ...Object.values(SECRET_SCORE),
  ]
  const expectNoLeak = (what: string, answer: unknown) => {
    const text = JSON.stringify(answer)
    for (const secret of leaks()) expect(text, `${what}: leaked ${secret}`).not.toContain(secret)
  }

  it("shows the organization's live scores once each, with the session of the request they grade", async () => {
    const res = await sqlQuery(tally, a, {
      sql: `SELECT toString(id) AS id, target_kind, toString(request_id) AS request_id, session_id, name, source,
                   data_type, value, string_value, comment
            FROM scores ORDER BY name`,
    })
    expect(res.status).toBe(200)
    expectNoLeak('scores', res)
    const [r1, r2, r3] = mine.map((r) => r.request_id)
    const row = (fields: Record<string, unknown>) => ({
      target_kind: 'request',
      source: 'api',
      data_type: 'numeric',
      value: 0,
      string_value: '',
      comment: '',
      ...fields,
    })
    expect(res.data.rows).toEqual([
      row({ id: ids.upserted, request_id: r2, session_id: 's-1', name: 'accuracy', value: 0.9 }),
      row({
        id: ids.plain,
        request_id: r1,
        session_id: 's-1',
        name: 'helpfulness',
        value: 0.75,
        comment: 'good',
      }),
      row({ id: ids.unknown, request_id: expect.any(String), session_id: '', name: 'orphan' }),
      // B's request id is A's own writing here: only the session look-up must find nothing.
      row({ id: ids.foreign, request_id: theirs[0], session_id: '', name: 'probe' }),
      row({
        id: ids.session,
        target_kind: 'session',
        request_id: null,
        session_id: 's-2',
        name: 'resolved',
        source: 'annotation',
        data_type: 'boolean',
        value: 1,
      }),
      row({
        id: ids.category,
        request_id: r3,
        session_id: 's-2',
        name: 'topic',
        source: 'eval',
        data_type: 'categorical',
        string_value: 'billing',
      }),
    ])
    // No deleted score, and every score once.
    const counts = await sqlQuery(tally, a, {
      sql: 'SELECT count() AS n, uniqExact(id) AS ids, countIf(name = {name:String}) AS deleted FROM scores',
      params: { name: 'toxicity' },
    })
    expect(counts.data.rows).toEqual([{ n: '6', ids: '6', deleted: '0' }])
  })

  it('joins with requests, and each organization sees its own scores only', async () => {
    const joined = await sqlQuery(tally, a, {
      sql: `SELECT r.model AS model, s.name AS name, s.value AS value
            FROM requests AS r JOIN scores AS s ON s.request_id = r.request_id ORDER BY name`,
    })
    expect(joined.status).toBe(200)
    expectNoLeak('join', joined)
    expect(joined.data.rows.map((r: { name: string }) => r.name)).toEqual([
      'accuracy',
      'helpfulness',
      'topic',
    ])

    const bSees = await sqlQuery(tally, b, {
      sql: 'SELECT name, session_id, comment FROM scores ORDER BY comment, session_id',
    })
    expect(bSees.status).toBe(200)
    expect(bSees.data.rows).toEqual([
      { name: SECRET_SCORE.name, session_id: SECRET.session, comment: '' },
      // B's score of A's request id: A's session is not B's to see.
      { name: SECRET_SCORE.name, session_id: '', comment: SECRET_SCORE.comment },
      { name: SECRET_SCORE.name, session_id: SECRET.session, comment: SECRET_SCORE.comment },
    ])
  })

  it("gives requests' properties as they are now: the latest update of each key over the logged map", async () => {
    const res = await sqlQuery(tally, a, {
      sql: 'SELECT toString(request_id) AS id, properties FROM requests ORDER BY request_created_at',
    })
    expect(res.status).toBe(200)
    expectNoLeak('properties', res)
    expect(res.data.rows.map((r: { properties: unknown }) => r.properties)).toEqual([
      { env: 'prod', reviewed: 'yes' },
      {},
      {},
    ])
    const filtered = await sqlQuery(tally, a, {
      sql: "SELECT count() AS n FROM requests WHERE properties['env'] = 'prod'",
    })
    expect(filtered.data.rows).toEqual([{ n: '1' }])
    // The column keeps the table's type.
    const schema = await sqlQuery(tally, a, {
      sql: "SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'requests' AND name = 'properties'",
    })
    expect(schema.data.rows).toEqual([{ type: 'Map(LowCardinality(String), String)' }])
    // Still one row per request.
    const counted = await sqlQuery(tally, a, {
      sql: 'SELECT count() AS n, uniqExact(request_id) AS u FROM requests',
    })
    expect(counted.data.rows).toEqual([{ n: '3', u: '3' }])
  })

  /** Through the API: each refused (400) or answering the caller's rows only. */
  const attacks: [string, () => string, 'refused' | 'answered'][] = [
    ['the raw scores table by name', () => `SELECT * FROM ${db()}.scores`, 'refused'],
    ['the raw scores table, FINAL', () => `SELECT * FROM ${db()}.scores FINAL`, 'refused'],
    ['the raw table, quoted', () => `SELECT * FROM \`${db()}\`.\`scores\``, 'refused'],
    ['default.scores', () => 'SELECT * FROM default.scores', 'refused'],
    ['scores_local', () => 'SELECT * FROM scores_local', 'refused'],
    ['scores_local in Tally’s database', () => `SELECT * FROM ${db()}.scores_local`, 'refused'],
    ['the property updates', () => `SELECT * FROM ${db()}.request_property_updates`, 'refused'],
    ['the property updates, local', () => `SELECT * FROM ${db()}.request_property_updates_local`, 'refused'],
    [
      'a join of the view with the raw table',
      () => `SELECT t.comment FROM scores s JOIN ${db()}.scores t ON 1 = 1`,
      'refused',
    ],
    [
      'a subquery on the raw table',
      () => `SELECT * FROM scores WHERE id IN (SELECT id FROM ${db()}.scores)`,
      'refused',
    ],
    [
      'UNION ALL with the raw table',
      () => `SELECT comment FROM scores UNION ALL SELECT comment FROM ${db()}.scores`,
      'refused',
    ],
    ['merge()', () => `SELECT * FROM merge('${db()}', '^scores')`, 'refused'],
    ['view()', () => `SELECT * FROM view(SELECT * FROM ${db()}.scores)`, 'refused'],
    ['mergeTreeIndex()', () => `SELECT * FROM mergeTreeIndex('${db()}', 'scores')`, 'refused'],
    ['remote()', () => `SELECT * FROM remote('127.0.0.1', ${db()}.scores)`, 'refused'],
    ['cluster()', () => `SELECT * FROM cluster('default', ${db()}.scores)`, 'refused'],
    ['loop()', () => `SELECT * FROM loop(${db()}.scores) LIMIT 1`, 'refused'],
    ['a column the view does not have', () => 'SELECT organization_id FROM scores', 'refused'],
    ['the deleted flag', () => 'SELECT * FROM scores WHERE is_deleted = 1', 'refused'],
    ['the view by its full name', () => `SELECT * FROM ${sqlViewsDatabase(db())}.scores`, 'answered'],
    ['B’s score by name', () => `SELECT * FROM scores WHERE name = '${SECRET_SCORE.name}'`, 'answered'],
    ['B’s session', () => `SELECT * FROM scores WHERE session_id = '${SECRET.session}'`, 'answered'],
    [
      'B’s request id',
      () => `SELECT * FROM scores WHERE toString(request_id) = '${theirs[1]}' OR session_id != 'zz'`,
      'answered',
    ],
  ]

  it(`holds against ${attacks.length} attack queries on scores through the API`, async () => {
    for (const [what, sql, expected] of attacks) {
      const res = await sqlQuery(tally, a, { sql: sql() })
      expectNoLeak(what, res)
      if (expected === 'refused') {
        expect(res.status, `${what}: ${JSON.stringify(res).slice(0, 300)}`).toBe(400)
        expect(res.error, what).toMatch(/^sql: /)
      } else expect(res.status, `${what}: ${JSON.stringify(res).slice(0, 300)}`).toBe(200)
    }
  })

  describe('the engine itself, without Tally’s check of the statement', () => {
    let engine: ClickHouseClient
    beforeAll(() => {
      // The restricted user, as the runner signs in, but the statement sent as it is.
      engine = createClient({
        url: engines().clickhouseSqlUrl ?? '',
        database: sqlViewsDatabase(db()),
        log: { level: ClickHouseLogLevel.OFF },
      })
    })
    afterAll(() => engine?.close())

    const run = async (query: string, organizationId: string | null = a.organizationId) => {
      const rs = await engine.query({
        query,
        format: 'JSONEachRow',
        clickhouse_settings: { readonly: '1' },
        ...(organizationId ? { http_headers: { [SQL_ORGANIZATION_HEADER]: organizationId } } : {}),
      })
      return rs.json<Record<string, unknown>>()
    }
    const refusal = async (query: string) => {
      try {
        const rows = await run(query)
        return { rows }
      } catch (err) {
        if (!(err instanceof ClickHouseError)) throw err
        return { code: err.code, message: err.message }
      }
    }

    /** [what, SQL, the engine's error code]: 497 ACCESS_DENIED unless the name does not exist for it. */
    const engineAttacks: [string, () => string, string][] = [
      ['the raw scores table', () => `SELECT * FROM ${db()}.scores`, '497'],
      ['the raw scores table, FINAL', () => `SELECT * FROM ${db()}.scores FINAL`, '497'],
      ['the property updates', () => `SELECT * FROM ${db()}.request_property_updates`, '497'],
      ['the requests table', () => `SELECT * FROM ${db()}.request_response_rmt`, '497'],
      [
        'a subquery on the raw table',
        () => `SELECT * FROM scores WHERE id IN (SELECT id FROM ${db()}.scores)`,
        '497',
      ],
      [
        'a join with the raw table',
        () => `SELECT t.comment FROM scores s JOIN ${db()}.scores t ON 1 = 1`,
        '497',
      ],
      ['view() around the raw table', () => `SELECT * FROM view(SELECT * FROM ${db()}.scores)`, '497'],
      ['mergeTreeIndex()', () => `SELECT * FROM mergeTreeIndex('${db()}', 'scores')`, '497'],
      ['remote()', () => `SELECT * FROM remote('127.0.0.1', ${db()}.scores)`, '497'],
      ['loop()', () => `SELECT * FROM loop(${db()}.scores)`, '497'],
      ['file()', () => "SELECT * FROM file('/etc/passwd', LineAsString)", '497'],
      // A single node has no shard-local table nor cluster: unknown to the user as to anyone.
      ['scores_local', () => `SELECT * FROM ${db()}.scores_local`, '60'],
      ['cluster()', () => `SELECT * FROM cluster('default', ${db()}.scores)`, '701'],
      // merge() sees only the tables the user may read: none in Tally's database.
      ['merge()', () => `SELECT * FROM merge('${db()}', '^scores')`, '636'],
      [
        'SETTINGS lifting the header',
        () => 'SELECT * FROM scores SETTINGS allow_get_client_http_header = 0',
        '164',
      ],
    ]

    it(`refuses ${engineAttacks.length} statements by its grants and readonly, with no Tally check in front`, async () => {
      for (const [what, sql, code] of engineAttacks) {
        const got = await refusal(sql())
        expectNoLeak(what, got)
        expect(got, what).toMatchObject({ code })
      }
    })

    it("answers the view with the header's organization only, and nothing without one", async () => {
      const names = async (org: string | null) =>
        (await run('SELECT name FROM scores ORDER BY name', org)).map((r) => r.name)
      expect(await names(a.organizationId)).toEqual([
        'accuracy',
        'helpfulness',
        'orphan',
        'probe',
        'resolved',
        'topic',
      ])
      expect(await names(b.organizationId)).toEqual(Array(3).fill(SECRET_SCORE.name))
      expect(await names(null)).toEqual([])
      expect(await names('not-a-uuid')).toEqual([])
      expect(await run('SELECT count() AS n FROM requests', null)).toEqual([{ n: 0 }])
    })
  })
})
