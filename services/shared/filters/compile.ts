import type { Condition, FilterTree, Subject } from './parse.ts'
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
  /**
   * The query's organization, as SQL (a placeholder the caller binds): score and property
   * conditions read other tables, always of this organization. Default `{org:UUID}`.
   */
  organization?: string
}

const PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/

/**
 * Compiles a request filter tree (spec 2.7) to a condition over request_response_rmt. Anything
 * invalid is a 400 naming its path; nothing is ever dropped. The caller ANDs the organization
 * condition outside it.
 */
export function compileRequestFilter(node: unknown, options: CompileOptions = {}): CompiledFilter {
  const tree = parseFilter(node, { path: options.path ?? 'body.filter' })
  const sql = new SqlWriter(options.prefix, options.organization)
  return { sql: sql.part(tree).request ?? 'true', params: sql.params, columns: sql.columns }
}

export interface CompiledSessionFilter {
  /** Request-level part: chooses which requests are aggregated (WHERE). */
  where: string
  /**
   * Session-level part over the session_* aggregate aliases, session_id and the score columns
   * `scoreJoin` adds (HAVING).
   */
  having: string
  /**
   * What the aggregation joins to its requests for aggregated score conditions (`LEFT JOIN …`):
   * per request, its average score of each name they read (NULL without one); '' when none.
   */
  scoreJoin: string
  params: Record<string, unknown>
}

/**
 * Compiles a session filter: request-level leaves go to WHERE, `sessions_request_response_rmt`
 * leaves to HAVING. That split is only faithful when the two kinds meet under `and` (the parser
 * refuses an `or` of both).
 */
export function compileSessionFilter(node: unknown, options: CompileOptions = {}): CompiledSessionFilter {
  const tree = parseFilter(node, { path: options.path ?? 'body.filter', sessions: true })
  const sql = new SqlWriter(options.prefix, options.organization)
  const part = sql.part(tree)
  return {
    where: part.request ?? 'true',
    having: part.session ?? 'true',
    scoreJoin: sql.scoreJoin(),
    params: sql.params,
  }
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
  /** The aggregated score conditions' columns and their score names (placeholders). */
  private readonly aggregated: { column: string; name: string }[] = []
  private readonly prefix: string
  private readonly org: string

  constructor(prefix = 'f', organization = '{org:UUID}') {
    if (!PREFIX.test(prefix)) throw new Error(`filter prefix ${prefix} is not an identifier`)
    this.prefix = prefix
    this.org = organization
  }

  part(tree: FilterTree): Part {
    switch (tree.kind) {
      case 'all':
        return {}
      case 'none':
        return { request: 'false' }
      case 'has-property': {
        this.columns.add('properties')
        const key = this.bind('String', tree.key)
        // Properties are only added or changed after the fact, never removed.
        return { request: `(mapContains(properties, ${key}) OR request_id IN (${this.updatedWith(key)}))` }
      }
      case 'condition': {
        const sql = this.condition(tree)
        const level = tree.subject.kind === 'property' ? 'request' : tree.subject.level
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

  /** The organization's requests with an after-the-fact value of the property `key` matching `where`. */
  private updatedWith(key: string, where?: string): string {
    const rows = `SELECT request_id FROM request_property_updates FINAL WHERE organization_id = ${this.org} AND key = ${key}`
    return where ? `${rows} AND ${where}` : rows
  }

  /**
   * A property as it is now: its latest after-the-fact value (request_property_updates) where one
   * was set, else the value the request was logged with.
   */
  private property(key: string, op: Condition['op'], value: string): string {
    this.columns.add('properties')
    const k = this.bind('String', key)
    const updated = this.text('value', op, value)
    const logged = this.text(`properties[${k}]`, op, value)
    return `(request_id IN (${this.updatedWith(k, updated)}) OR (${logged} AND request_id NOT IN (${this.updatedWith(k)})))`
  }

  /** The comparison of a score's value: its number, its boolean (1 or 0), or its category. */
  private scoreValue(
    subject: Extract<Subject, { kind: 'score' }>,
    op: Condition['op'],
    value: Condition['value'],
  ): string {
    switch (subject.type) {
      case 'number':
        return `data_type != 'categorical' AND value ${COMPARISONS[op]} ${this.bind('Float64', String(value))}`
      case 'boolean':
        return `data_type = 'boolean' AND value = ${value ? 1 : 0}`
      case 'text':
        return `data_type = 'categorical' AND ${this.text('string_value', op, value as string)}`
    }
  }

  /**
   * A score condition. A request's or a session's: it has a live score of the name whose value
   * matches. An aggregate: over the session's requests the request-level condition chooses (the
   * aggregation's own rows), the avg/min/max of their scores of the name (each request's scores of
   * several sources averaged first) matches; a session none of whose chosen requests has the score
   * does not (the aggregate is NULL).
   */
  private score(
    subject: Extract<Subject, { kind: 'score' }>,
    op: Condition['op'],
    value: Condition['value'],
  ): string {
    this.columns.add('scores')
    const name = this.bind('String', subject.name)
    if (subject.aggregate) {
      // Over the session's requests, in the query's own aggregation: a column per condition,
      // joined to each request (scoreJoin), which avg/min/max skip where it is NULL.
      const column = `score_${this.aggregated.length}`
      this.aggregated.push({ column, name })
      return `${subject.aggregate}(${column}) ${COMPARISONS[op]} ${this.bind('Float64', String(value))}`
    }
    const live = `FROM scores FINAL WHERE organization_id = ${this.org} AND is_deleted = 0 AND name = ${name}`
    if (subject.level === 'request')
      return `request_id IN (SELECT request_id ${live} AND target_kind = 'request' AND ${this.scoreValue(subject, op, value)})`
    return `session_id IN (SELECT session_id ${live} AND target_kind = 'session' AND ${this.scoreValue(subject, op, value)})`
  }

  /**
   * The join the aggregated score conditions read: per request of the organization with a score
   * of one of their names, each column its average of the name's numeric and boolean scores
   * (the sources of a name averaged first), NULL where it has none; '' without such conditions.
   */
  scoreJoin(): string {
    if (this.aggregated.length === 0) return ''
    const columns = this.aggregated.map((a) => `avgIfOrNull(value, name = ${a.name}) AS ${a.column}`)
    return `LEFT JOIN (
  SELECT request_id AS scored_request_id, ${columns.join(', ')}
  FROM scores FINAL
  WHERE organization_id = ${this.org} AND is_deleted = 0 AND target_kind = 'request' AND data_type != 'categorical'
    AND name IN (${this.aggregated.map((a) => a.name).join(', ')})
  GROUP BY request_id) AS scored ON request_id = scored_request_id`
  }

  private condition({ subject, op, value }: Condition): string {
    if (subject.kind === 'property') return this.property(subject.key, op, value as string)
    if (subject.kind === 'score') return this.score(subject, op, value)
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
