import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engines, type TestOrg, type TestTally } from '../support/harness.ts'
import { SECRET, sqlQuery, startWithTwoOrganizations } from './fixtures.ts'

/**
 * Every way we could think of for one organization's SQL to reach another's rows. Each attack is
 * either refused (a 400, nothing run) or answered with the caller's own rows only: no answer may
 * carry the second organization's id, model, user, session or request text. What refuses each one
 * is ClickHouse: the restricted user's grants, the views' organization header, readonly=1.
 */
describe('SQL isolation between organizations', () => {
  let tally: TestTally
  let a: TestOrg
  let b: TestOrg
  beforeAll(async () => {
    ;({ tally, a, b } = await startWithTwoOrganizations())
  })
  afterAll(() => tally?.close())

  const db = () => tally.config.CLICKHOUSE_DATABASE
  const table = () => `${db()}.request_response_rmt`
  const port = () => new URL(engines().clickhouseUrl).port
  const password = () => decodeURIComponent(new URL(engines().clickhouseUrl).password)

  /** [what it tries, the SQL, refused or answered]: an answered attack must hold none of B's data. */
  const attacks: [string, () => string, 'refused' | 'answered'][] = [
    ['the raw table by name', () => 'SELECT * FROM request_response_rmt', 'refused'],
    ['the raw table in Tally’s database', () => `SELECT * FROM ${table()}`, 'refused'],
    ['the raw table, FINAL', () => `SELECT * FROM ${table()} FINAL`, 'refused'],
    ['quoted identifiers', () => `SELECT * FROM \`${db()}\`.\`request_response_rmt\``, 'refused'],
    [
      'UNION ALL with the raw table',
      () => `SELECT request_id FROM requests UNION ALL SELECT request_id FROM ${table()}`,
      'refused',
    ],
    [
      'a subquery on the raw table',
      () => `SELECT * FROM requests WHERE request_id IN (SELECT request_id FROM ${table()})`,
      'refused',
    ],
    [
      'a JOIN with the raw table',
      () => `SELECT t.model FROM requests r JOIN ${table()} t ON 1 = 1`,
      'refused',
    ],
    [
      'a cross join with the raw table',
      () => `SELECT t.model FROM requests AS r, ${table()} AS t`,
      'refused',
    ],
    [
      'a scalar CTE over the raw table',
      () => `WITH (SELECT groupArray(model) FROM ${table()}) AS m SELECT m`,
      'refused',
    ],
    ['the raw table behind a comment', () => `SELECT * FROM /* requests */ ${table()}`, 'refused'],
    [
      'a line comment, then the raw table',
      () => `SELECT request_id FROM requests -- harmless\nUNION ALL SELECT request_id FROM ${table()}`,
      'refused',
    ],
    ['the session aggregate table', () => `SELECT * FROM ${db()}.session_hours`, 'refused'],
    ['the sessions rollup', () => `SELECT * FROM ${db()}.session_hour_totals`, 'refused'],
    ['the migrations table', () => `SELECT * FROM ${db()}.schema_migrations`, 'refused'],
    [
      'SETTINGS switching the header off',
      () => 'SELECT * FROM requests SETTINGS allow_get_client_http_header = 0',
      'refused',
    ],
    ['SETTINGS readonly = 0', () => 'SELECT * FROM requests SETTINGS readonly = 0', 'refused'],
    [
      'SETTINGS in a subquery',
      () => 'SELECT * FROM (SELECT * FROM requests SETTINGS allow_get_client_http_header = 0)',
      'refused',
    ],
    [
      'SETTINGS additional_table_filters',
      () => "SELECT * FROM requests SETTINGS additional_table_filters = {'requests': '1'}",
      'refused',
    ],
    ['SET as the statement', () => 'SET allow_get_client_http_header = 0', 'refused'],
    ['two statements', () => `SELECT 1; SELECT * FROM ${table()}`, 'refused'],
    ['a statement after a comment', () => 'SELECT 1 /* ; */; DROP TABLE requests', 'refused'],
    ['system.processes (other queries’ text)', () => 'SELECT query FROM system.processes', 'refused'],
    ['system.parts', () => 'SELECT * FROM system.parts', 'refused'],
    ['system.users and grants', () => 'SELECT * FROM system.grants', 'refused'],
    [
      'system.tables of Tally’s database',
      () => `SELECT name, create_table_query FROM system.tables WHERE database = '${db()}'`,
      'answered',
    ],
    [
      'system.columns of Tally’s database',
      () => `SELECT name FROM system.columns WHERE database = '${db()}'`,
      'answered',
    ],
    ['information_schema', () => 'SELECT * FROM information_schema.tables', 'refused'],
    ['file()', () => "SELECT * FROM file('/etc/passwd', LineAsString)", 'refused'],
    [
      'url() to ClickHouse itself',
      () => `SELECT * FROM url('http://127.0.0.1:${port()}/?query=SELECT+1', LineAsString)`,
      'refused',
    ],
    ['s3()', () => "SELECT * FROM s3('http://127.0.0.1:1/bucket/key', LineAsString)", 'refused'],
    [
      'remote() with Tally’s own password',
      () => `SELECT * FROM remote('127.0.0.1:${port()}', ${table()}, 'tally', '${password()}')`,
      'refused',
    ],
    ['remoteSecure()', () => `SELECT * FROM remoteSecure('127.0.0.1', ${table()})`, 'refused'],
    ['cluster()', () => `SELECT * FROM cluster('default', ${table()})`, 'refused'],
    ['merge() over Tally’s database', () => `SELECT * FROM merge('${db()}', '.*')`, 'refused'],
    ['mergeTreeIndex()', () => `SELECT * FROM mergeTreeIndex('${db()}', 'request_response_rmt')`, 'refused'],
    ['view() around the raw table', () => `SELECT * FROM view(SELECT * FROM ${table()})`, 'refused'],
    ['loop()', () => `SELECT * FROM loop(${table()}) LIMIT 1`, 'refused'],
    ['executable()', () => "SELECT * FROM executable('cat /etc/passwd', TSV, 'a String')", 'refused'],
    [
      'postgresql()',
      () => "SELECT * FROM postgresql('127.0.0.1:5432', 'test', 'api_keys', 'postgres', '')",
      'refused',
    ],
    ['dictionary()', () => "SELECT * FROM dictionary('x')", 'refused'],
    ['dictGet()', () => "SELECT dictGet('x', 'y', 1)", 'refused'],
    ['input()', () => "SELECT * FROM input('a String')", 'refused'],
    ['INTO OUTFILE', () => "SELECT * FROM requests INTO OUTFILE '/tmp/tally-sql-outfile'", 'refused'],
    ['a FORMAT of its own', () => 'SELECT * FROM requests FORMAT TSV', 'refused'],
    ['INSERT into a view', () => "INSERT INTO requests (model) VALUES ('x')", 'refused'],
    ['DROP', () => 'DROP TABLE requests', 'refused'],
    [
      'CREATE … AS SELECT',
      () => `CREATE TABLE stolen ENGINE = Memory AS SELECT * FROM ${table()}`,
      'refused',
    ],
    ['ALTER … DELETE', () => `ALTER TABLE ${table()} DELETE WHERE 1`, 'refused'],
    ['SYSTEM', () => 'SYSTEM RELOAD USERS', 'refused'],
    ['KILL QUERY', () => 'KILL QUERY WHERE 1', 'refused'],
    ['SHOW TABLES FROM Tally’s database', () => `SHOW TABLES FROM ${db()}`, 'refused'],
    ['DESCRIBE the raw table', () => `DESCRIBE TABLE ${table()}`, 'refused'],
    ['EXPLAIN of the raw table', () => `EXPLAIN SELECT * FROM ${table()}`, 'refused'],
    [
      'a column the views do not have',
      () => 'SELECT * FROM requests WHERE organization_id != toUUID(0)',
      'refused',
    ],
    [
      'getSetting of the header switch',
      () => "SELECT getSetting('allow_get_client_http_header')",
      'answered',
    ],
    [
      'reading the header itself',
      () => "SELECT getClientHTTPHeader('X-Tally-Organization') AS org",
      'refused',
    ],
    ['the views by their full name', () => `SELECT * FROM sql_${db()}.requests`, 'answered'],
    ['everything in requests', () => 'SELECT * FROM requests', 'answered'],
    ['everything in sessions', () => 'SELECT * FROM sessions', 'answered'],
    ['a WHERE that is always true', () => "SELECT * FROM requests WHERE 1 = 1 OR model = 'x'", 'answered'],
    ['B’s model by name', () => `SELECT * FROM requests WHERE model = '${SECRET.model}'`, 'answered'],
    [
      'B’s session by name',
      () => `SELECT * FROM sessions WHERE session_id = '${SECRET.session}'`,
      'answered',
    ],
    ['a generated table', () => 'SELECT * FROM numbers(3)', 'answered'],
  ]

  it(`holds against ${attacks.length} attack queries`, async () => {
    expect(attacks.length).toBeGreaterThanOrEqual(40)
    const leaks = [b.organizationId, SECRET.model, SECRET.user, SECRET.session, SECRET.body]
    for (const [what, sql, expected] of attacks) {
      const text = sql()
      const res = await sqlQuery(tally, a, { sql: text })
      const answer = JSON.stringify(res)
      for (const secret of leaks) expect(answer, `${what}: leaked ${secret}`).not.toContain(secret)
      if (expected === 'refused') {
        expect(res.status, `${what}: ${answer.slice(0, 300)}`).toBe(400)
        expect(res.error, what).toMatch(/^sql: /)
      } else {
        expect(res.status, `${what}: ${answer.slice(0, 300)}`).toBe(200)
      }
    }
  })

  it('answered attacks see the caller’s own rows: the views work for it, they just stop at its organization', async () => {
    const mine = await sqlQuery(tally, a, { sql: 'SELECT count() AS n FROM requests' })
    expect(mine.data.rows).toEqual([{ n: '3' }])
    const theirs = await sqlQuery(tally, a, {
      sql: `SELECT count() AS n FROM requests WHERE model = '${SECRET.model}'`,
    })
    expect(theirs.data.rows).toEqual([{ n: '0' }])
  })

  it('an organization header of the caller’s own choosing is not Tally’s to take', async () => {
    // The header is set by Tally from the API key; a caller's own X-Tally-Organization is not passed on.
    const res = await tally.app.inject({
      method: 'POST',
      url: '/v1/sql/query',
      headers: { ...a.headers, 'x-tally-organization': b.organizationId },
      payload: { sql: 'SELECT model FROM requests' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.body).not.toContain(SECRET.model)
  })

  it('a guess at another organization’s values gets the same answer whether it exists or not', async () => {
    // Merged into one part, the two organizations share granules; the views' skip indexes then
    // read those granules for a value only B holds. Nothing of that may reach A's answer.
    await tally.clickhouse.command({ query: `OPTIMIZE TABLE ${table()} FINAL` })
    const guess = async (user: string) => {
      const res = await sqlQuery(tally, a, {
        sql: 'SELECT count() AS n FROM requests WHERE user_id IN ({u:String}, {v:String})',
        params: { u: user, v: 'nobody-at-all' },
      })
      expect(res.status).toBe(200)
      const { elapsed_ms: _timing, ...statistics } = res.data.statistics
      return { ...res.data, statistics }
    }
    expect(await guess(SECRET.user)).toEqual(await guess('not-a-user-of-b'))
  })
})
