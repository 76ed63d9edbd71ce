/**
 * Reading ClickHouse's own parse of a statement: the text of `EXPLAIN AST` as a tree, and the
 * tokens of `tokenizeQuery` checked for what would make that text ambiguous. Pure functions: the
 * guard (guard.ts) asks the server and hands the answers here.
 */

export interface AstNode {
  /** The node's kind: SelectQuery, Function, Identifier, TableExpression, … */
  type: string
  /** What follows the kind on its line: a function's or identifier's name, a literal. */
  text: string
  children: AstNode[]
}

/** A statement Tally will not run, with the reason its caller reads. */
export class SqlRefused extends Error {}

const CHILDREN = / \(children (\d+)\)$/
const ALIAS = / \(alias .*\)$/s

/**
 * Parses EXPLAIN AST's answer: one node per line, one space of indent per level, `(children N)`
 * at the end of a node that has children. The counts are checked against the lines, so text that
 * is not one node per line (which guard.ts makes sure cannot happen) is refused, not misread.
 */
export function parseExplainAst(output: string): AstNode {
  const refuse = (why: string): never => {
    throw new SqlRefused(`ClickHouse's parse of the statement could not be read (${why})`)
  }
  const counted: { node: AstNode; expected: number }[] = []
  /** The open nodes: ancestors[d] is the last node seen at depth d. */
  const ancestors: AstNode[] = []
  for (const line of output.replace(/\n+$/, '').split('\n')) {
    const depth = line.length - line.trimStart().length
    let rest = line.slice(depth)
    const children = CHILDREN.exec(rest)
    if (children) rest = rest.slice(0, children.index)
    const space = rest.indexOf(' ')
    const node: AstNode = {
      type: space < 0 ? rest : rest.slice(0, space),
      text: space < 0 ? '' : rest.slice(space + 1),
      children: [],
    }
    if (!node.type) refuse('an empty line')
    if (depth === 0 && ancestors.length > 0) refuse('more than one root')
    if (depth > ancestors.length) refuse(`a line indented past its parent: ${line}`)
    ancestors.length = depth
    ancestors[depth - 1]?.children.push(node)
    ancestors.push(node)
    counted.push({ node, expected: children ? Number(children[1]) : 0 })
  }
  for (const { node, expected } of counted)
    if (node.children.length !== expected)
      refuse(`${node.type} ${node.text} has ${node.children.length} children, not ${expected}`)
  return ancestors[0] ?? refuse('no answer')
}

/** The name a Function/Identifier node carries, without its ` (alias …)`. */
export function nodeName(node: AstNode): string {
  return node.text.replace(ALIAS, '')
}

/** One token of `tokenizeQuery`: its byte range in the statement and its kind. */
export interface Token {
  begin: number
  end: number
  type: string
}

/** A control character (C0 or DEL) or a backslash, which would start an escape. */
const controlOrBackslash = (text: string) =>
  [...text].some((c) => {
    const code = c.codePointAt(0) ?? 0
    return code < 0x20 || code === 0x7f || c === '\\'
  })

/**
 * Checks what the lexer found: quoted identifiers free of control characters and backslashes
 * (EXPLAIN AST prints names as they are, so a line break in one would forge lines), the values of
 * `{name:Identifier}` parameters likewise, and one statement only. Returns nothing; throws
 * SqlRefused naming the problem.
 */
export function checkTokens(sql: string, tokens: readonly Token[], params: Record<string, unknown>): void {
  const bytes = Buffer.from(sql, 'utf8')
  const textOf = ({ begin, end }: Token) => bytes.subarray(begin, end).toString('utf8')
  const meaningful = tokens.filter(({ type }) => type !== 'Whitespace' && type !== 'Comment')
  // One pass: what follows a semicolon other than more semicolons is a second statement.
  let lastStatementToken = -1
  meaningful.forEach(({ type }, i) => {
    if (type !== 'Semicolon') lastStatementToken = i
  })
  meaningful.forEach((token, i) => {
    const kind = token.type
    if (kind === 'QuotedIdentifier' && controlOrBackslash(textOf(token).slice(1, -1)))
      throw new SqlRefused(
        `the quoted identifier ${JSON.stringify(textOf(token))} holds a control character or a backslash, which Tally does not allow in names`,
      )
    if (kind === 'Semicolon' && i < lastStatementToken)
      throw new SqlRefused('must be one statement: nothing may follow a semicolon')
    // {name:Identifier}: the parameter's value becomes a name in the statement.
    if (kind !== 'OpeningCurlyBrace') return
    const [name, colon, type, close] = meaningful.slice(i + 1, i + 5)
    if (
      name?.type === 'BareWord' &&
      colon?.type === 'Colon' &&
      type &&
      textOf(type) === 'Identifier' &&
      close?.type === 'ClosingCurlyBrace'
    ) {
      const value = params[textOf(name)]
      if (typeof value === 'string' && controlOrBackslash(value))
        throw new SqlRefused(
          `the parameter ${textOf(name)} names an identifier and holds a control character or a backslash`,
        )
    }
  })
}

/** Tokens a SHOW, EXISTS or USE statement is made of when it calls nothing and computes nothing. */
const PLAIN_STATEMENT_TOKENS = new Set([
  'BareWord',
  'QuotedIdentifier',
  'StringLiteral',
  'Number',
  'Dot',
  'Comma',
  'Semicolon',
])

/**
 * A statement whose parts EXPLAIN AST does not show (`SHOW TABLES LIMIT <expression>`,
 * `SHOW COLUMNS … WHERE <expression>`) may hold only names, literals and keywords: no brackets, no
 * operators, so no expression that could call a function.
 */
export function checkPlainStatement(tokens: readonly Token[]): void {
  const odd = tokens.find(
    ({ type }) => type !== 'Whitespace' && type !== 'Comment' && !PLAIN_STATEMENT_TOKENS.has(type),
  )
  if (odd)
    throw new SqlRefused(
      `this statement may hold names and literals only (no ${odd.type}): its LIMIT, WHERE or LIKE cannot be checked`,
    )
}
