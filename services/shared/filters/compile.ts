import type { Condition, FilterTree } from './parse.ts'
import { parseFilter } from './parse.ts'

export { MAX_DEPTH, MAX_FILTER_WILDCARDS, MAX_LEAVES, MAX_PATTERN_UNDERSCORES } from './parse.ts'

/** A ClickHouse boolean expression with `{name:Type}` placeholders and their values. */
export interface CompiledFilter {
  sql: string
  params: Record<string, unknown>
  /** The columns the condition reads (`properties` for property leaves). */
  columns: ReadonlySet<string>
}

export interface CompileOptions {
  /** Placeholder name prefix, so two compiled filters can share one query. Default `f`. */
  prefix?: string
  /** Where the filter sits in the request, for error messages. Default `body.filter`. */
  path?: string
}

const PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/

/**
 * Compiles a request filter tree (spec 2.7) to a condition over request_response_rmt. Anything
 * invalid is a 400 naming its path; nothing is ever dropped. The caller ANDs the organization
 * condition outside it.
 */
export function compileRequestFilter(node: unknown, options: CompileOptions = {}): CompiledFilter {
  const tree = parseFilter(node, { path: options.path ?? 'body.filter' })
  const sql = new SqlWriter(options.prefix)
  return { sql: sql.part(tree).request ?? 'true', params: sql.params, columns: sql.columns }
}

export interface CompiledSessionFilter {
  /** Request-level part: chooses which requests are aggregated (WHERE). */
  where: string
  /** Session-level part over the session_* aggregate aliases (HAVING). */
  having: string
  params: Record<string, unknown>
}

/**
 * Compiles a session filter: request-level leaves go to WHERE, `sessions_request_response_rmt`
 * leaves to HAVING. That split is only faithful when the two kinds meet under `and` (the parser
 * refuses an `or` of both).
 */
export function compileSessionFilter(node: unknown, options: CompileOptions = {}): CompiledSessionFilter {
  const tree = parseFilter(node, { path: options.path ?? 'body.filter', sessions: true })
  const sql = new SqlWriter(options.prefix)
  const part = sql.part(tree)
  return { where: part.request ?? 'true', having: part.session ?? 'true', params: sql.params }
}

/** A compiled subtree; an absent side means "no condition" (true). */
interface Part {
  request?: string
  session?: string
}

const join = (op: 'AND' | 'OR', a?: string, b?: string) => (a && b ? `(${a} ${op} ${b})` : (a ?? b))

const COMPARISONS: Record<string, string> = {
  equals: '=',
  'not-equals': '!=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
}

/** Writes a parsed tree as ClickHouse SQL; every value is a bound parameter. */
class SqlWriter {
  readonly params: Record<string, unknown> = {}
  readonly columns = new Set<string>()
  private readonly prefix: string

  constructor(prefix = 'f') {
    if (!PREFIX.test(prefix)) throw new Error(`filter prefix ${prefix} is not an identifier`)
    this.prefix = prefix
  }

  part(tree: FilterTree): Part {
    switch (tree.kind) {
      case 'all':
        return {}
      case 'none':
        return { request: 'false' }
      case 'has-property':
        this.columns.add('properties')
        return { request: `mapContains(properties, ${this.bind('String', tree.key)})` }
      case 'condition': {
        const sql = this.condition(tree)
        const level = tree.subject.kind === 'column' ? tree.subject.level : 'request'
        return level === 'session' ? { session: sql } : { request: sql }
      }
      default: {
        // The parser refuses an "or" of both levels, so each side of one has a single level.
        const op = tree.kind === 'and' ? 'AND' : 'OR'
        const left = this.part(tree.left)
        const right = this.part(tree.right)
        const request = join(op, left.request, right.request)
        const session = join(op, left.session, right.session)
        return { ...(request ? { request } : {}), ...(session ? { session } : {}) }
      }
    }
  }

  private condition({ subject, op, value }: Condition): string {
    if (subject.kind === 'property') {
      this.columns.add('properties')
      return this.text(`properties[${this.bind('String', subject.key)}]`, op, value as string)
    }
    const { column, type, uuid } = subject.field
    this.columns.add(column)
    switch (type) {
      case 'text':
        if (uuid && (op === 'equals' || op === 'not-equals')) {
          return `${column} ${COMPARISONS[op]} ${this.bind('UUID', value)}`
        }
        return this.text(uuid ? `toString(${column})` : column, op, value as string)
      case 'number':
        // As text: the client refuses to send numbers beyond 2^53, which JSON allows.
        return `${column} ${COMPARISONS[op]} ${this.bind('Float64', String(value))}`
      case 'timestamp':
        return `${column} ${COMPARISONS[op]} fromUnixTimestamp64Milli(${this.bind('Int64', value)}, 'UTC')`
      case 'boolean':
        return `${column} = ${this.bind('Bool', value)}`
    }
  }

  private text(column: string, op: Condition['op'], value: string): string {
    const param = this.bind('String', value)
    switch (op) {
      case 'like':
        return `${column} LIKE ${param}`
      case 'ilike':
        return `${column} ILIKE ${param}`
      case 'contains':
        return `positionCaseInsensitiveUTF8(${column}, ${param}) > 0`
      case 'not-contains':
        return `positionCaseInsensitiveUTF8(${column}, ${param}) = 0`
      default:
        return `${column} ${COMPARISONS[op]} ${param}`
    }
  }

  private bind(type: string, value: unknown): string {
    const name = `${this.prefix}${Object.keys(this.params).length}`
    this.params[name] = value
    return `{${name}:${type}}`
  }
}
