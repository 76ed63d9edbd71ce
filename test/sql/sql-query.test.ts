import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callApi } from '../support/api.ts'
import { engines, startTestTally, type TestOrg, type TestTally } from '../support/harness.ts'
import { waitFor } from '../support/wait.ts'
import { SECRET, sqlQuery, startWithTwoOrganizations } from './fixtures.ts'

describe('POST /v1/sql/query and GET /v1/sql/schema', () => {
  let tally: TestTally
  let a: TestOrg
  let b: TestOrg
  beforeAll(async () => {
    ;({ tally, a, b } = await startWithTwoOrganizations())
  })
  afterAll(() => tally?.close())

  it('answers rows with column names and types, from the caller’s requests only', async () => {
    const res = await sqlQuery(tally, a, {
      sql: 'SELECT model, count() AS n, sum(cost) AS usd FROM requests GROUP BY model ORDER BY model',
    })
    expect(res.status).toBe(200)
    expect(res.data.columns).toEqual([
      { name: 'model', type: 'LowCardinality(String)' },
      { name: 'n', type: 'UInt64' },
      { name: 'usd', type: 'Float64' },
    ])
    // 64-bit integers are strings: nothing above 2^53 loses digits.
    expect(res.data.rows).toEqual([
      { model: 'claude-sonnet-4', n: '1', usd: 1 },
      { model: 'gpt-4o-mini', n: '2', usd: 0.75 },
    ])
    expect(res.data.row_count).toBe(2)
    expect(Object.keys(res.data.statistics)).toEqual(['elapsed_ms'])
  })

  it('reads sessions with their totals, deduplicated: a re-sent request counts once', async () => {
    // The same request id logged twice: the table holds two versions until a merge; the views read FINAL.
    const id = randomUUID()
    const again = {
      request_id: id,
      model: 'gpt-4o-mini',
      session_id: 's-dup',
      created_at: '2026-11-03T00:00:00.000Z',
      latency_ms: 10,
      cost_usd: 2,
    }
    for (let i = 0; i < 2; i++) {
      const logged = await callApi(tally.app, 'POST', '/v1/request/log', { as: a, body: again })
      expect(logged.status).toBe(201)
    }
    const res = await sqlQuery(tally, a, {
      sql: 'SELECT session_id, requests, cost, models FROM sessions ORDER BY session_id',
    })
    expect(res.status).toBe(200)
    expect(res.data.rows).toEqual([
      { session_id: 's-1', requests: '2', cost: 0.75, models: ['gpt-4o-mini'] },
      { session_id: 's-2', requests: '1', cost: 1, models: ['claude-sonnet-4'] },
      { session_id: 's-dup', requests: '1', cost: 2, models: ['gpt-4o-mini'] },
    ])
  })

  it('takes query parameters ({name:Type}) and WITH, UNION, subqueries and a trailing semicolon', async () => {
    const res = await sqlQuery(tally, a, {
      sql: `WITH per_session AS (SELECT session_id, count() AS n FROM requests WHERE model = {model:String} GROUP BY session_id)
            SELECT session_id, n FROM per_session
            UNION ALL SELECT 'total', toUInt64(count()) FROM requests WHERE request_created_at < {before:DateTime64(3)};`,
      params: { model: 'gpt-4o-mini', before: '2026-11-02 00:00:00' },
    })
    expect(res.status).toBe(200)
    expect(res.data.rows).toEqual(
      expect.arrayContaining([
        { session_id: 's-1', n: '2' },
        { session_id: 's-dup', n: '1' },
        { session_id: 'total', n: '2' },
      ]),
    )
    // A parameter is a value, never SQL: quotes in it match nothing.
    const injected = await sqlQuery(tally, a, {
      sql: 'SELECT count() AS n FROM requests WHERE model = {model:String}',
      params: { model: "x' OR 1=1 --" },
    })
    expect(injected.data.rows).toEqual([{ n: '0' }])
  })

  it('streams CSV with a header row', async () => {
    const res = await tally.app.inject({
      method: 'POST',
      url: '/v1/sql/query',
      headers: a.headers,
      payload: {
        sql: 'SELECT model, prompt_tokens FROM requests WHERE session_id = {s:String} ORDER BY request_created_at',
        params: { s: 's-1' },
        format: 'csv',
      },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.headers['content-disposition']).toBe('attachment; filename="tally-sql.csv"')
    expect(res.body).toBe('"model","prompt_tokens"\n"gpt-4o-mini",100\n"gpt-4o-mini",200\n')
  })

  it('streams JSON lines and TSV, and the envelope keeps odd text, 64-bit integers and empty answers exact', async () => {
    const ask = (sql: string, format: string) =>
      tally.app.inject({ method: 'POST', url: '/v1/sql/query', headers: a.headers, payload: { sql, format } })
    const jsonl = await ask(
      "SELECT model, prompt_tokens FROM requests WHERE session_id = 's-1' ORDER BY request_created_at",
      'jsonl',
    )
    expect(jsonl.headers['content-type']).toBe('application/x-ndjson')
    expect(jsonl.body).toBe(
      '{"model":"gpt-4o-mini","prompt_tokens":100}\n{"model":"gpt-4o-mini","prompt_tokens":200}\n',
    )
    const tsv = await ask("SELECT model, 'a\tb' AS x FROM requests WHERE session_id = 's-2'", 'tsv')
    expect(tsv.headers['content-type']).toBe('text/tab-separated-values; charset=utf-8')
    expect(tsv.body).toBe('model\tx\nclaude-sonnet-4\ta\\tb\n')
    const odd = await ask(
      "SELECT 'line\\n\\t], \"rows\": 9' AS s, toUInt64(18446744073709551615) AS big, [map('k', [1, 2])] AS nested",
      'json',
    )
    expect(odd.statusCode).toBe(200)
    expect(odd.json().data).toMatchObject({
      columns: [
        { name: 's', type: 'String' },
        { name: 'big', type: 'UInt64' },
        { name: 'nested', type: 'Array(Map(String, Array(UInt8)))' },
      ],
      rows: [{ s: 'line\n\t], "rows": 9', big: '18446744073709551615', nested: [{ k: [1, 2] }] }],
      row_count: 1,
    })
    const none = await ask('SELECT model FROM requests WHERE 0', 'json')
    expect(none.json()).toMatchObject({
      data: { columns: [{ name: 'model', type: 'LowCardinality(String)' }], rows: [], row_count: 0 },
      error: null,
    })
  })

  it('streams Parquet that ClickHouse reads back as the same rows', async () => {
    const sql =
      'SELECT request_id, model, prompt_tokens, cost FROM requests ORDER BY request_created_at, request_id'
    const res = await tally.app.inject({
      method: 'POST',
      url: '/v1/sql/query',
      headers: a.headers,
      payload: { sql, format: 'parquet' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/vnd.apache.parquet')
    const file = res.rawPayload
    expect(file.subarray(0, 4).toString()).toBe('PAR1')

    // Read back by ClickHouse's own Parquet reader, into a table of this test's database.
    const table = `parquet_check_${randomUUID().replaceAll('-', '')}`
    await tally.clickhouse.command({
      query: `CREATE TABLE ${table} (request_id UUID, model String, prompt_tokens UInt32, cost Float64) ENGINE = Memory`,
    })
    await tally.clickhouse.insert({
      table,
      values: Readable.from([file], { objectMode: false }),
      format: 'Parquet',
    })
    const back = await tally.clickhouse.query({ query: `SELECT * FROM ${table}`, format: 'JSONEachRow' })
    const json = await sqlQuery(tally, a, { sql })
    expect(await back.json()).toEqual(
      json.data.rows.map((r: Record<string, unknown>) => ({ ...r, prompt_tokens: Number(r.prompt_tokens) })),
    )
    expect(json.data.rows).toHaveLength(4)
  })

  it('describes the views it may read, with ClickHouse types and what each column means', async () => {
    const res = await callApi(tally.app, 'GET', '/v1/sql/schema', { as: a })
    expect(res.status).toBe(200)
    const byName = Object.fromEntries(res.data.tables.map((t: { name: string }) => [t.name, t]))
    expect(Object.keys(byName)).toEqual(['requests', 'sessions', 'scores'])
    expect(byName.requests.columns).toContainEqual({
      name: 'cost',
      type: 'Float64',
      description: expect.stringContaining('USD'),
    })
    expect(byName.requests.columns.map((c: { name: string }) => c.name)).not.toContain('organization_id')
    for (const table of res.data.tables)
      for (const column of table.columns)
        expect(column.description, `${table.name}.${column.name}`).not.toBe('')
  })

  it('answers 400 with ClickHouse’s message for a bad query, and for anything but one SELECT', async () => {
    const bad = await sqlQuery(tally, a, { sql: 'SELECT nope FROM requests' })
    expect(bad.status).toBe(400)
    expect(bad.error).toMatch(/^sql: Unknown expression identifier `nope`/)
    expect(bad.error).not.toMatch(/version|Code: \d+/)

    const syntax = await sqlQuery(tally, a, { sql: 'SELEC 1' })
    expect(syntax.status).toBe(400)
    expect(syntax.error).toMatch(/^sql: Syntax error/)

    for (const sql of ['SHOW TABLES', 'DESCRIBE TABLE requests', 'EXPLAIN SELECT 1', 'SELECT 1 FORMAT TSV']) {
      const res = await sqlQuery(tally, a, { sql })
      expect(res.status, sql).toBe(400)
      expect(res.error, sql).toMatch(/^sql: must be one SELECT statement/)
    }
  })

  it('refuses a bad body: empty SQL, unknown keys, bad formats and parameter names, NUL', async () => {
    const cases: [unknown, RegExp][] = [
      [{ sql: '   ' }, /^body\.sql: must be one SELECT statement/],
      [{ sql: ';' }, /^body\.sql: must be one SELECT statement/],
      [{ sql: 'SELECT 1', fromat: 'csv' }, /^body: Unrecognized key: "fromat"/],
      [{ sql: 'SELECT 1', format: 'xlsx' }, /^body\.format: /],
      [{ sql: 'SELECT 1', params: { 'a-b': 1 } }, /^body\.params\.a-b: must be a name of letters/],
      [{ sql: 'SELECT 1', params: { a: { nested: true } } }, /^body\.params\.a: /],
      [{ sql: 'SELECT 1\u0000' }, /^body\.sql: must not contain NUL/],
      [{ sql: 'x'.repeat(100_001) }, /^body\.sql: must be at most 100000/],
    ]
    for (const [body, error] of cases) {
      const res = await sqlQuery(tally, a, body)
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(res.error).toMatch(error)
    }
  })

  it('runs every example query of docs/data-teams.md', async () => {
    const doc = readFileSync(new URL('../../docs/data-teams.md', import.meta.url), 'utf8')
    const examples = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)]
      .map((m) => m[1] as string)
      .filter((sql) => !sql.includes('CREATE'))
    expect(examples.length).toBeGreaterThanOrEqual(4)
    for (const sql of examples) {
      const res = await sqlQuery(tally, a, { sql })
      expect(res.status, `${sql}\n${res.error}`).toBe(200)
    }
  })

  it('needs an API key', async () => {
    const res = await callApi(tally.app, 'POST', '/v1/sql/query', { body: { sql: 'SELECT 1' } })
    expect(res.status).toBe(401)
    const schema = await callApi(tally.app, 'GET', '/v1/sql/schema')
    expect(schema.status).toBe(401)
  })

  it('the second organization sees only its own rows through the same views', async () => {
    const res = await sqlQuery(tally, b, {
      sql: 'SELECT model, user_id, count() AS n FROM requests GROUP BY ALL',
    })
    expect(res.data.rows).toEqual([{ model: SECRET.model, user_id: SECRET.user, n: '2' }])
  })
})

describe('SQL limits', () => {
  let tally: TestTally
  let a: TestOrg
  beforeAll(async () => {
    ;({ tally, a } = await startWithTwoOrganizations({
      env: { TALLY_SQL_MAX_ROWS_TO_READ: '2', TALLY_SQL_MAX_RESULT_ROWS: '1' },
    }))
  })
  afterAll(() => tally?.close())

  it('a query reading more rows than allowed is a 422 naming the limit', async () => {
    const res = await sqlQuery(tally, a, { sql: 'SELECT count() FROM requests' })
    expect(res.status).toBe(422)
    expect(res.error).toBe(
      'query exceeded max_rows_to_read (2 rows): narrow the query with a WHERE on request_created_at or another column',
    )
  })

  it('an answer of more rows than allowed is a 422 naming the limit', async () => {
    const res = await sqlQuery(tally, a, { sql: 'SELECT number FROM numbers(2)' })
    expect(res.status).toBe(422)
    expect(res.error).toMatch(/^query exceeded max_result_rows \(1 rows\) or max_result_bytes/)
  })

  it('the query cannot lift a limit with its own SETTINGS', async () => {
    const res = await sqlQuery(tally, a, {
      sql: 'SELECT count() FROM requests SETTINGS max_rows_to_read = 1000',
    })
    expect(res.status).toBe(400)
    expect(res.error).toMatch(/^sql: Cannot modify 'max_rows_to_read' setting in readonly mode/)
    // Nor raise its CPU priority above other organizations' (a negative nice value).
    const raised = await sqlQuery(tally, a, { sql: 'SELECT 1 SETTINGS os_thread_priority = -20' })
    expect(raised.status).toBe(400)
    expect(raised.error).toMatch(
      /^sql: Cannot modify 'os_thread(s_nice_value_query|_priority)' setting in readonly mode/,
    )
  })
})

describe('SQL result limit met after the first block', () => {
  // 8,192-row blocks (SQL_EXTRA_SETTINGS): the first blocks fit, a later one goes over.
  let tally: TestTally
  let org: TestOrg
  beforeAll(async () => {
    tally = await startTestTally({ env: { TALLY_SQL_MAX_RESULT_ROWS: '70000' } })
    org = await tally.newOrg()
  })
  afterAll(() => tally?.close())

  const FORMATS = ['json', 'jsonl', 'csv', 'tsv', 'parquet']
  const query = (sql: string, format: string) =>
    tally.app.inject({ method: 'POST', url: '/v1/sql/query', headers: org.headers, payload: { sql, format } })

  it('is a 422 naming the limit, not a cut-off answer, in every format', async () => {
    for (const format of FORMATS) {
      const res = await query('SELECT number FROM numbers(200000)', format)
      expect(res.statusCode, format).toBe(422)
      expect(res.json().error, format).toMatch(/^query exceeded max_result_rows \(70000 rows\)/)
    }
  })

  it('a constant column counts every row: 38 MB of one repeated value is a 422, in every format', async () => {
    // The engine's own check counts a constant column's value once; the server's summary of the
    // finished answer counts it per row (60,000 × 640 bytes > 32 MiB).
    for (const format of FORMATS) {
      const started = Date.now()
      const res = await query('SELECT repeat(char(1), 640) AS s FROM numbers(60000)', format)
      expect(res.statusCode, format).toBe(422)
      expect(res.json().error, format).toBe(
        'query exceeded max_result_bytes (32 MiB): select fewer rows or columns (LIMIT), or aggregate, or take the whole window as a file with POST /v1/exports',
      )
      expect(Date.now() - started, format).toBeLessThan(10_000)
    }
    // Just under the limit, the same query is answered whole.
    const whole = await query("SELECT repeat('a', 640) AS s FROM numbers(50000)", 'jsonl')
    expect(whole.statusCode).toBe(200)
    expect(whole.body.split('\n').filter(Boolean)).toHaveLength(50_000)
  })
})

describe('the restricted ClickHouse user, checked before SQL is served', () => {
  it.each([
    // Tally's own user: it can read the raw table, so it may not run callers' SQL.
    [
      'a user with more than the views',
      () => engines().clickhouseUrl,
      /SQL is off: .* has grants beyond the views/,
    ],
    // clickhouse-local cannot make users: SQL stays off, and says what an operator runs.
    [
      'no user, and none Tally may make',
      () => '',
      /SQL is off: .*could not make the restricted user tally_sql.*CREATE USER OR REPLACE tally_sql IDENTIFIED WITH sha256_password BY '<password>'/,
    ],
  ])('%s: 503 saying why, nothing run', async (_what, sqlUrl, why) => {
    const tally = await startTestTally({ env: { CLICKHOUSE_SQL_URL: sqlUrl() } })
    try {
      const org = await tally.newOrg()
      const res = await callApi(tally.app, 'POST', '/v1/sql/query', { as: org, body: { sql: 'SELECT 1' } })
      expect(res.status).toBe(503)
      expect(res.error).toMatch(why)
      expect((await callApi(tally.app, 'GET', '/v1/sql/schema', { as: org })).status).toBe(503)
    } finally {
      await tally.close()
    }
  })
})

describe('SQL query lifetimes', () => {
  let tally: TestTally
  let org: TestOrg
  // Few rows (under max_rows_to_read), much work each: it runs into the time limit.
  const heavy =
    'SELECT count() FROM numbers(90000000) WHERE length(arrayFilter(x -> sipHash64(x, number) % 7 = 3, range(100))) > 0'
  beforeAll(async () => {
    tally = await startTestTally({
      env: { TALLY_SQL_MAX_EXECUTION_TIME: '2s', TALLY_QUERY_CONCURRENCY_PER_ORG: '2' },
    })
    org = await tally.newOrg()
  })
  afterAll(() => tally?.close())

  /**
   * The callers' queries the server runs now (not Tally's checks of them), each with the CPU
   * priority it runs at (ClickHouse 26 names the setting os_threads_nice_value_query,
   * os_thread_priority its alias).
   */
  const callerQueries = async () => {
    const rs = await tally.clickhouse.query({
      query: `SELECT query, Settings['os_threads_nice_value_query'] AS p FROM system.processes
              WHERE user = 'tally_sql' AND query NOT LIKE 'EXPLAIN AST%' AND query NOT LIKE '%tokenizeQuery%'`,
      format: 'JSONEachRow',
    })
    return ((await rs.json()) as { query: string; p: string }[]).map((r) => ({
      query: r.query,
      priority: r.p === '' ? 0 : Number(r.p),
    }))
  }
  const running = async () => (await callerQueries()).length

  it('an organization never runs more server queries than its slots, and none outlives its answer by 2 s', async () => {
    let most = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, await running())
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })()
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        callApi(tally.app, 'POST', '/v1/sql/query', { as: org, body: { sql: heavy } }),
      ),
    )
    sampling = false
    await sampler
    for (const answer of answers) {
      expect([422, 429], answer.error ?? '').toContain(answer.status)
      if (answer.status === 422) expect(answer.error).toMatch(/^query exceeded max_execution_time \(2 s\)/)
    }
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(2)
    await waitFor(async () => (await running()) === 0, {
      timeoutMs: 2_000,
      what: 'no caller query left running',
    })
  }, 60_000)

  it("a query whose rows each cost much stops with its answer: a block's work is bounded", async () => {
    // Unbounded blocks of 65,409 rows x range(100000) would be minutes of work the time limit
    // cannot interrupt; 8,192-row blocks and 10^7 range() elements per block end it at once.
    const started = Date.now()
    const res = await callApi(tally.app, 'POST', '/v1/sql/query', {
      as: org,
      body: {
        sql: 'SELECT count() FROM numbers(1000000) WHERE length(arrayFilter(x -> sipHash64(x, number) % 7 = 3, range(100000))) > 0',
      },
    })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(Date.now() - started).toBeLessThan(6_000)
    await waitFor(async () => (await running()) === 0, {
      timeoutMs: 2_000,
      what: 'no caller query left running',
    })
  }, 60_000)

  it('an organization keeping the engine busy gets a lower CPU priority there; another’s query keeps 0', async () => {
    // Organizations of their own: what the tests above ran counts against theirs for a while.
    const busyOrg = await tally.newOrg()
    const other = await tally.newOrg()
    /** The priority the gate gives a query of `as` now, as the query itself reads it. */
    const priorityOf = async (as: TestOrg) => {
      const res = await callApi(tally.app, 'POST', '/v1/sql/query', {
        as,
        body: { sql: "SELECT getSetting('os_threads_nice_value_query') AS p" },
      })
      expect(res.status, res.error ?? '').toBe(200)
      return Number((res.data.rows as { p: string }[])[0]?.p)
    }
    const busy = Array.from({ length: 2 }, () =>
      callApi(tally.app, 'POST', '/v1/sql/query', { as: busyOrg, body: { sql: heavy } }),
    )
    let seen: { priority: number }[] = []
    await waitFor(
      async () => {
        seen = await callerQueries()
        return seen.length === 2
      },
      { timeoutMs: 10_000, what: () => `two heavy queries; saw ${JSON.stringify(seen)}` },
    )
    // The busy organization's second query started one step down (6); the other's runs at 0.
    expect(seen.map((q) => q.priority).sort((x, y) => x - y)).toEqual([0, 6])
    expect(await priorityOf(other)).toBe(0)
    for (const answer of await Promise.all(busy)) expect(answer.status).toBe(422)
    // Its next query, alone, still pays for the two: what an organization used counts for a while.
    expect(await priorityOf(busyOrg)).toBeGreaterThan(0)
  }, 60_000)

  it('a client that goes away ends its query at once, and its slot is free again', async () => {
    const controller = new AbortController()
    const abandoned = fetch(`${tally.url}/v1/sql/query`, {
      method: 'POST',
      signal: controller.signal,
      headers: { ...org.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: heavy }),
    }).catch(() => undefined)
    await waitFor(async () => (await running()) === 1, { timeoutMs: 10_000, what: 'the query to run' })
    controller.abort()
    await abandoned
    await waitFor(async () => (await running()) === 0, {
      timeoutMs: 2_000,
      what: 'the abandoned query to end',
    })
    const next = await callApi(tally.app, 'POST', '/v1/sql/query', {
      as: org,
      body: { sql: 'SELECT 1 AS one' },
    })
    expect(next.status).toBe(200)
    expect(next.data.rows).toEqual([{ one: 1 }])
  }, 60_000)
})
