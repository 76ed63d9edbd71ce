/**
 * Tally's check of SQL written by someone else (an organization's `POST /v1/sql/query`, a data
 * team at the analyst door) before ClickHouse runs it. ClickHouse parses it (tokenizeQuery, then
 * EXPLAIN AST: nothing runs), and the statement runs only if every node of that parse is of a kind
 * Tally reads fully and every function in it is on the allowlist of policy.ts. This is the second
 * layer: the first is the engine's (the user's grants, readonly, the server process contained).
 */
import {
  type AstNode,
  checkPlainStatement,
  checkTokens,
  nodeName,
  parseExplainAst,
  SqlRefused,
  type Token,
} from './ast.ts'
import { AGGREGATE_NAME_IN_A_STRING, type Allowlist, allowlist } from './policy.ts'

export { SqlRefused }

/** `select`: one SELECT, nothing else (Tally picks the format). `analyst`: what a ClickHouse client sends. */
export type GuardMode = 'select' | 'analyst'

/**
 * Runs one statement on the server as the user (and with the settings) the checked statement will
 * run with, with `params` as its query parameters and EXPLAIN_SETTINGS; resolves with its answer
 * as text. A FORMAT clause must not be added to the statement (EXPLAIN AST would read it as part of
 * what it explains): the default format is TabSeparatedRaw. `whose`: the guard's own parameters
 * (plain values), or the caller's, as the caller gave them to check() (a transport that takes
 * them in ClickHouse's escaped form passes them on unchanged).
 */
export type AskServer = (
  statement: string,
  params: Record<string, unknown>,
  whose: 'guard' | 'caller',
) => Promise<string>

/**
 * The most a check's answer (a statement's tokens, its EXPLAIN AST) may hold. A 100 KB statement
 * parses to far less; a parameter used thousands of times is printed each time, and what Tally
 * reads must not grow with that.
 */
const MAX_CHECK_ANSWER_BYTES = 8 * 1024 * 1024

/** A check's answer as text, refused (and the stream let go) past MAX_CHECK_ANSWER_BYTES. */
export async function checkAnswerText(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > MAX_CHECK_ANSWER_BYTES) {
      body.destroy()
      throw new SqlRefused(
        `its parse is over ${MAX_CHECK_ANSWER_BYTES / 1024 / 1024} MiB (a parameter or expression repeated too many times)`,
      )
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Settings of the checks' requests: EXPLAIN AST's lines as they are, and no more than a 100 KB statement needs. */
export const EXPLAIN_SETTINGS = {
  default_format: 'TabSeparatedRaw',
  max_result_rows: '1000000',
  max_result_bytes: String(1024 ** 3),
  result_overflow_mode: 'throw',
} as const

/** Node kinds of a SELECT whose every part EXPLAIN AST shows (unlike APPLY, which hides its function). */
const SELECT_NODES = new Set([
  'SelectWithUnionQuery',
  'SelectIntersectExceptQuery',
  'SelectQuery',
  'ExpressionList',
  'Function',
  'Identifier',
  'Literal',
  'Asterisk',
  'QualifiedAsterisk',
  'ColumnsRegexpMatcher',
  'ColumnsListMatcher',
  'QualifiedColumnsRegexpMatcher',
  'QualifiedColumnsListMatcher',
  'ColumnsTransformerList',
  'ColumnsExceptTransformer',
  'ColumnsReplaceTransformer',
  'ColumnsReplaceTransformer::Replacement',
  'Subquery',
  'WithElement',
  'TablesInSelectQuery',
  'TablesInSelectQueryElement',
  'TableExpression',
  'TableIdentifier',
  'TableJoin',
  'ArrayJoin',
  'SampleRatio',
  'OrderByElement',
  'InterpolateElement',
  'WindowDefinition',
  'WindowListElement',
  // A SETTINGS clause: EXPLAIN AST does not show its values, and needs not: the user runs with
  // readonly=1, so ClickHouse refuses any change a clause asks for.
  'Set',
])

/** Statements whose LIMIT, WHERE and LIKE EXPLAIN AST does not show: checked on their tokens. */
const PLAIN_STATEMENTS = new Set([
  'ShowTables',
  'ShowColumns',
  'ShowCreateTableQuery',
  'ShowCreateViewQuery',
  'ShowCreateDatabaseQuery',
  'ExistsTableQuery',
  'ExistsDatabaseQuery',
  'ExistsViewQuery',
  'UseQuery',
])

/** Statements a ClickHouse client sends besides SELECT: the catalogue, and switching database. */
const ANALYST_STATEMENTS = new Set([
  'ShowTables',
  'ShowColumns',
  'ShowCreateTableQuery',
  'ShowCreateViewQuery',
  'ShowCreateDatabaseQuery',
  'DescribeQuery',
  'ExistsTableQuery',
  'ExistsDatabaseQuery',
  'ExistsViewQuery',
  'UseQuery',
])

export function createSqlGuard(ask: AskServer, list: Allowlist = allowlist()) {
  return {
    /** Resolves when `sql` may run; throws SqlRefused saying why not, or the server's own error (a syntax error). */
    async check(sql: string, mode: GuardMode, params: Record<string, unknown> = {}): Promise<void> {
      // The statement as a literal in the body, not a parameter in the URL: a long one would be
      // over the length ClickHouse takes for a URL's field.
      const [tokens] = JSON.parse(
        await ask(`SELECT tokenizeQuery('${stringLiteral(sql)}') FORMAT JSONCompactEachRow`, {}, 'guard'),
      ) as [Token[]]
      checkTokens(sql, tokens, params)
      const root = parseExplainAst(await ask(`EXPLAIN AST ${sql}`, params, 'caller'))
      walkStatement(root, mode, list)
      if (PLAIN_STATEMENTS.has(root.type)) checkPlainStatement(tokens)
    },
  }
}

/** ClickHouse string literal content: every backslash and quote escaped, NUL written as \0. */
function stringLiteral(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\u0000', '\\0')
}

function walkStatement(root: AstNode, mode: GuardMode, list: Allowlist): void {
  if (root.type === 'SelectWithUnionQuery') {
    const [body, ...clauses] = root.children
    if (mode === 'select' && clauses.length > 0)
      throw new SqlRefused(
        'must be one SELECT statement (WITH, UNION and subqueries allowed), without FORMAT or INTO OUTFILE: the answer\'s format is the request\'s "format"',
      )
    // A client's FORMAT is an Identifier after the body; INTO OUTFILE's file name is a Literal.
    if (clauses.length > 1 || clauses.some((c) => c.type !== 'Identifier'))
      throw new SqlRefused('INTO OUTFILE writes on the server: Tally does not allow it')
    if (body) walk(body, root, list)
    return
  }
  if (mode === 'analyst' && root.type === 'Explain') {
    const [inner, ...more] = root.children
    if (!inner || more.length > 0 || inner.type !== 'SelectWithUnionQuery')
      throw new SqlRefused('EXPLAIN is allowed of one SELECT only')
    walkStatement(inner, 'select', list)
    return
  }
  if (mode === 'analyst' && ANALYST_STATEMENTS.has(root.type)) {
    for (const child of root.children) walk(child, root, list)
    return
  }
  throw new SqlRefused(
    mode === 'select'
      ? `must be one SELECT statement (WITH, UNION and subqueries allowed): ClickHouse reads it as ${root.type}`
      : `${root.type} is not allowed here: SELECT, SHOW, DESCRIBE, EXISTS, USE and EXPLAIN of a SELECT are`,
  )
}

/** A string literal's text as EXPLAIN AST prints it (TabSeparatedRaw): `'name(0.5)'`. */
const AGGREGATE_NAME = /^'([A-Za-z_][A-Za-z0-9_]*)(\(\s*[-+0-9.eE]+(\s*,\s*[-+0-9.eE]+)*\s*\))?'$/

/** arrayReduce('name(params)', …): a plain, allowed aggregate name and number parameters only. */
function checkAggregateName(node: AstNode, name: string, list: Allowlist): void {
  const first = node.children[0]?.children[0]
  const literal = first?.type === 'Literal' ? first.text : ''
  const aggregate = AGGREGATE_NAME.exec(literal)?.[1]
  if (!aggregate)
    throw new SqlRefused(
      `${name}() takes the aggregate function's name as a string literal with number parameters at most, e.g. 'quantile(0.9)'`,
    )
  const why = list.refuseFunction(aggregate)
  if (why) throw new SqlRefused(`function ${aggregate}() is not allowed: ${why}`)
}

function walk(node: AstNode, parent: AstNode, list: Allowlist): void {
  if (!SELECT_NODES.has(node.type))
    throw new SqlRefused(`uses ${node.type}, which Tally does not allow in SQL it runs for others`)
  if (node.type === 'Function') {
    const name = nodeName(node)
    const tableFunction = parent.type === 'TableExpression'
    const why = tableFunction ? list.refuseTableFunction(name) : list.refuseFunction(name)
    if (why)
      throw new SqlRefused(
        `${tableFunction ? 'table function' : 'function'} ${name}() is not allowed: ${why}`,
      )
    if (!tableFunction && AGGREGATE_NAME_IN_A_STRING.includes(name)) checkAggregateName(node, name, list)
  } else if (node.type === 'Identifier' || node.type === 'TableIdentifier') {
    const name = nodeName(node)
    // clickhouse-local reads a file named as a table of its default database (`/etc/passwd`).
    if (/[/\\]/.test(name)) throw new SqlRefused(`${name} names a file, which Tally does not allow`)
    const why = node.type === 'Identifier' && !name.includes('.') ? list.refuseIdentifier(name) : undefined
    if (why) throw new SqlRefused(`${name} names the function ${name}(), which is not allowed: ${why}`)
  }
  for (const child of node.children) walk(child, node, list)
}
