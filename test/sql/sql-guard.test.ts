import { text } from 'node:stream/consumers'
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import allowedFunctions from '../../services/api/sql/allowed-functions.json' with { type: 'json' }
import { checkTokens, parseExplainAst, SqlRefused } from '../../services/api/sql/ast.ts'
import { sqlUserStatements } from '../../services/api/sql/engine-user.ts'
import {
  checkAnswerText,
  createSqlGuard,
  EXPLAIN_SETTINGS,
  type GuardMode,
} from '../../services/api/sql/guard.ts'
import { allowlist, deriveAllowedFunctions } from '../../services/api/sql/policy.ts'
import { readServerFunctions } from '../../services/api/sql/server-functions.ts'
import { engines } from '../support/harness.ts'

/**
 * The check of SQL written by others (services/api/sql/guard.ts), on the real engine's parse: what
 * it lets through, what it refuses and why, and that its allowlist is the one its rules give for
 * the ClickHouse under test.
 */
let admin: ClickHouseClient
let asSql: ClickHouseClient

beforeAll(() => {
  const quiet = { level: ClickHouseLogLevel.OFF }
  admin = createClient({ url: engines().clickhouseUrl, log: quiet })
  asSql = createClient({ url: engines().clickhouseSqlUrl ?? engines().clickhouseUrl, log: quiet })
})
afterAll(async () => {
  await admin?.close()
  await asSql?.close()
})

const guard = () =>
  createSqlGuard(async (statement, query_params) => {
    const { stream } = await asSql.exec({
      query: statement,
      query_params,
      clickhouse_settings: { ...EXPLAIN_SETTINGS, readonly: '1' },
    })
    return checkAnswerText(stream)
  })

async function verdict(sql: string, mode: GuardMode = 'select', params: Record<string, unknown> = {}) {
  try {
    await guard().check(sql, mode, params)
    return 'ok'
  } catch (err) {
    if (err instanceof SqlRefused) return `refused: ${err.message}`
    return `error: ${(err as Error).message}`
  }
}

describe('the allowlist', () => {
  it('is the one the rules of policy.ts give for the ClickHouse under test (else: npm run derive:sql-functions, and review)', async () => {
    const { rows, combinators, version } = await readServerFunctions(admin)
    const derived = deriveAllowedFunctions(rows, combinators, version)
    expect(derived.clickhouse).toBe(allowedFunctions.clickhouse)
    expect(derived).toEqual(allowedFunctions)
  })

  it('refuses every function of the rules and takes aggregate combinators of allowed ones', () => {
    const list = allowlist()
    for (const name of [
      'file',
      'hostName',
      'hostname',
      'FQDN',
      'getServerSetting',
      'url',
      'dictGet',
      'addressToSymbol',
    ])
      expect(list.refuseFunction(name), name).toBeDefined()
    for (const name of [
      'sum',
      'sumIf',
      'sumIfOrNull',
      'uniqStateOrNull',
      'countDistinct',
      'quantilesIf',
      'SUM',
      'lower',
    ])
      expect(list.refuseFunction(name), name).toBeUndefined()
    // A combinator on a function that is not an aggregate, or on a refused name, is refused.
    for (const name of ['fileIf', 'lowerIf', 'hostNameOrNull', 'OrNullIf', 'toStringIf'])
      expect(list.refuseFunction(name), name).toBeDefined()
    expect(list.refuseTableFunction('numbers')).toBeUndefined()
    for (const name of [
      'file',
      'url',
      's3',
      'remote',
      'merge',
      'executable',
      'mergeTreeIndex',
      'input',
      'format',
    ])
      expect(list.refuseTableFunction(name), name).toBeDefined()
  })
})

describe("reading the engine's parse", () => {
  it('refuses an answer whose lines and child counts disagree rather than misread it', () => {
    expect(() => parseExplainAst('SelectWithUnionQuery (children 2)\n ExpressionList\n')).toThrow(SqlRefused)
    expect(() => parseExplainAst('A\nB\n')).toThrow(/more than one root/)
    expect(() => parseExplainAst('A (children 1)\n   B\n')).toThrow(/indented past/)
    const tree = parseExplainAst('A (children 1)\n B (children 1)\n  Function file (alias x) (children 0)\n')
    expect(tree.children[0]?.children[0]).toMatchObject({ type: 'Function', text: 'file (alias x)' })
  })

  it('refuses quoted names and Identifier parameters with line breaks, and a second statement', () => {
    const tokens = (sql: string, spans: [number, number, string][]) =>
      checkTokens(
        sql,
        spans.map(([begin, end, type]) => ({ begin, end, type })),
        { t: 'a\nb' },
      )
    expect(() => tokens('`a\nb`', [[0, 5, 'QuotedIdentifier']])).toThrow(/control character/)
    expect(() => tokens('"a\\x"', [[0, 5, 'QuotedIdentifier']])).toThrow(/backslash/)
    expect(() =>
      tokens('{t:Identifier}', [
        [0, 1, 'OpeningCurlyBrace'],
        [1, 2, 'BareWord'],
        [2, 3, 'Colon'],
        [3, 13, 'BareWord'],
        [13, 14, 'ClosingCurlyBrace'],
      ]),
    ).toThrow(/parameter t/)
    expect(() =>
      tokens('x; y', [
        [0, 1, 'BareWord'],
        [1, 2, 'Semicolon'],
        [3, 4, 'BareWord'],
      ]),
    ).toThrow(/one statement/)
  })
})

describe('the guard, on ClickHouse', () => {
  const cases: [string, string | RegExp, GuardMode?][] = [
    ['SELECT 1', 'ok'],
    [
      "SELECT count() FROM numbers(10) WHERE number IN (SELECT number FROM numbers(3)) AND toString(number) LIKE '%1'",
      'ok',
    ],
    [
      'WITH t AS (SELECT number AS n FROM numbers(5)) SELECT n, sumIf(n, n > 1) OVER (ORDER BY n), count(DISTINCT n), ' +
        'CASE n WHEN 1 THEN 2 ELSE 3 END, arrayMap(x -> x * 2, [n]) FROM t GROUP BY n ORDER BY n WITH FILL',
      'ok',
    ],
    ['SELECT * EXCEPT (number) FROM numbers(1)', 'ok'],
    ['SELECT current_user, now()', 'ok'],
    ["SELECT file('/proc/self/environ')", /function file\(\) is not allowed: it reads the server's files/],
    ["SELECT FILE('/etc/passwd')", /function FILE\(\) is not allowed/],
    ["SELECT * FROM file('/etc/passwd', LineAsString)", /table function file\(\) is not allowed/],
    ["SELECT file(concat(getServerSetting('path'), '/../credentials.json'))", /is not allowed/],
    ['SELECT hostName()', /function hostName\(\) is not allowed: it tells about the host/],
    ['SELECT hostname', /hostname names the function hostname\(\)/],
    ["SELECT getClientHTTPHeader('Authorization')", /getClientHTTPHeader\(\) is not allowed/],
    ["SELECT * FROM url('http://127.0.0.1:1/', LineAsString)", /table function url\(\) is not allowed/],
    ["SELECT dictGet('d', 'a', 1)", /function dictGet\(\) is not allowed/],
    ['SELECT * APPLY(hostName) FROM numbers(1)', /uses ColumnsApplyTransformer/],
    ['SELECT * FROM `/etc/passwd`', /names a file/],
    ['SELECT * FROM default.`/etc/hostname`', /names a file/],
    ['SELECT 1 AS `a\n   Function file`', /control character/],
    ["SELECT 1 INTO OUTFILE '/tmp/tally-guard'", /FORMAT or INTO OUTFILE/],
    ['SELECT 1 FORMAT JSON', /FORMAT or INTO OUTFILE/],
    ["SELECT 1 INTO OUTFILE '/tmp/tally-guard'", /INTO OUTFILE writes on the server/, 'analyst'],
    ['SELECT 1 FORMAT JSON', 'ok', 'analyst'],
    ['SHOW TABLES', /ClickHouse reads it as ShowTables/],
    ['SHOW TABLES', 'ok', 'analyst'],
    ['DESCRIBE TABLE system.one', 'ok', 'analyst'],
    ['EXPLAIN SELECT 1', 'ok', 'analyst'],
    ["EXPLAIN SELECT file('x')", /function file\(\) is not allowed/, 'analyst'],
    ['DROP TABLE x', /DropQuery is not allowed here/, 'analyst'],
    [
      'SELECT editDistance(randomString(40000), reverse(randomString(40000)))',
      /its work per row grows without bound/,
    ],
    [
      'SELECT arrayLevenshteinDistance(range(60000), reverse(range(60000)))',
      /its work per row grows without bound/,
    ],
    ['SELECT sleep(3)', /holds a query slot/],
    // SQL written inside strings, which the engine parses and runs: found by a red-team pass.
    [
      "SELECT y FROM values('x UInt8, y String ALIAS hostName()', 1)",
      /table function values\(\) is not allowed/,
    ],
    [
      "SELECT arrayReduce('quantile(toFloat64(file(\\'/proc/self/cmdline\\')))', [1])",
      /takes the aggregate function's name as a string literal/,
    ],
    [
      "SELECT initializeAggregation('quantile(toFloat64(hostName()))', 1)",
      /takes the aggregate function's name/,
    ],
    ["SELECT arrayReduce('fileIf', [1])", /function fileIf\(\) is not allowed/],
    ["SELECT arrayReduce('quantile(0.5)', [1, 2, 3]), arrayReduce('uniqExactIf', [1], [1])", 'ok'],
    ["SELECT structureToProtobufSchema('a UInt8, x String ALIAS hostName()', 'M')", /structure string/],
    ['SHOW TABLES LIMIT toUInt64(hostName())', /names and literals only/, 'analyst'],
    ['SHOW COLUMNS FROM system.one WHERE name = hostName()', /names and literals only/, 'analyst'],
    ["SHOW TABLES FROM system LIKE 'one' LIMIT 3", 'ok', 'analyst'],
    ['SELECT 1; SELECT 2', /one statement/],
    ['SELEC 1', /^error: .*Syntax error/],
  ]

  it.each(cases)('%s', async (sql, expected, mode) => {
    const got = await verdict(sql, mode ?? 'select')
    if (typeof expected === 'string') expect(got).toBe(expected)
    else expect(got).toMatch(expected)
  })

  it('reads a statement of 20,000 semicolons at once, and a long one without a URL limit', async () => {
    const started = Date.now()
    expect(await verdict(`SELECT 1${'; '.repeat(20_000)}`)).toBe('ok')
    expect(await verdict(`SELECT 1${';'.repeat(10)} SELECT 2`)).toMatch(/one statement/)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(await verdict(`SELECT ${Array.from({ length: 33_000 }, () => '1').join(',')}`)).toBe('ok')
    // The statement reaches tokenizeQuery as a literal: quotes and backslashes in it stay its own.
    expect(await verdict("SELECT 'it''s', 'a\\'b', '\\\\' AS x, '\\\\''")).toMatch(/^(ok|error: .*Syntax)/)
    expect(await verdict("SELECT 1') AS t, tokenizeQuery('SELECT 1 AS `a\nb`")).toMatch(
      /control character|Syntax/,
    )
  })

  it('refuses a statement whose parse would be huge, reading no more of it than the cap', async () => {
    // 5,000 uses of a 2,000-character parameter: EXPLAIN AST prints the value at each use (10 MB).
    const sql = `SELECT ${Array.from({ length: 5_000 }, () => '{p:String}').join(',')}`
    expect(await verdict(sql, 'select', { p: 'x'.repeat(2_000) })).toMatch(
      /^refused: its parse is over 8 MiB/,
    )
    expect(await verdict(sql, 'select', { p: 'x' })).toBe('ok')
  })

  it('checks a {name:Identifier} parameter as the name it becomes', async () => {
    expect(await verdict('SELECT * FROM {t:Identifier}', 'select', { t: 'system.one' })).toBe('ok')
    expect(await verdict('SELECT * FROM {t:Identifier}', 'select', { t: '/etc/passwd' })).toMatch(
      /names a file/,
    )
    expect(await verdict('SELECT {s:String}', 'select', { s: 'a\nFunction file' })).toBe('ok')
  })

  it('the statements that make the restricted user on a clickhouse-server parse there', async () => {
    for (const statement of sqlUserStatements('tally', 'password-123')) {
      const { stream } = await admin.exec({ query: `EXPLAIN AST ${statement}` })
      expect(await text(stream), statement).toMatch(
        /^(CreateSettingsProfileQuery|CreateUserQuery|GrantQuery|ASTCreate|Create|Grant)/i,
      )
    }
  })
})
