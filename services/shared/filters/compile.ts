import { isSessionProperty, REQUEST_TABLE, SESSION_PROPERTIES } from '../clickhouse/request-table.ts'
import { badRequest } from '../errors.ts'
import {
  type FieldDef,
  OPERATOR_ALIASES,
  OPERATORS,
  PROPERTIES,
  REQUEST_FIELDS,
  SESSION_FIELDS,
  SESSION_TABLE,
} from './fields.ts'

/** A ClickHouse boolean expression with `{name:Type}` placeholders and their values. */
export interface CompiledFilter {
  sql: string
  params: Record<string, unknown>
}

export interface CompileOptions {
  /** Placeholder name prefix, so two compiled filters can share one query. Default `f`. */
  prefix?: string
  /** Where the filter sits in the request, for error messages. Default `body.filter`. */
  path?: string
}

export const MAX_DEPTH = 32
export const MAX_LEAVES = 200
const MAX_TEXT_LENGTH = 10_000
/**
 * Wildcards of like/ilike patterns. ClickHouse runs such a pattern as a regular expression whose
 * cost per byte grows steeply with the number of `_` (on 4 KB bodies, per 2,000 rows: 16 `_` about
 * 30 ms, 64 about 2 s, 1,000 about 115 s), and it checks max_execution_time only between granules
 * (up to 8,192 rows), so one granule under a costly pattern would run past every time limit.
 * These bounds keep the worst filter to a fraction of a second per granule.
 */
export const MAX_PATTERN_UNDERSCORES = 16
export const MAX_FILTER_WILDCARDS = 64
/** DateTime64(3)'s range, so a bound outside it is a 400 rather than an engine error. */
const MIN_TIME_MS = Date.UTC(1900, 0, 1)
const MAX_TIME_MS = Date.UTC(2299, 11, 31, 23, 59, 59, 999)
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/

/**
 * Compiles a request filter tree (spec 2.7) to a condition over request_response_rmt. Anything
 * invalid is a 400 naming its path; nothing is ever dropped. The caller ANDs the organization
 * condition outside it.
 */
export function compileRequestFilter(node: unknown, options: CompileOptions = {}): CompiledFilter {
  const compiler = new Compiler(options, false)
  const part = compiler.node(node, options.path ?? 'body.filter', 1)
  return { sql: part.request ?? 'true', params: compiler.params }
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
 * leaves to HAVING. That split is only faithful when the two kinds meet under `and`.
 */
export function compileSessionFilter(node: unknown, options: CompileOptions = {}): CompiledSessionFilter {
  const compiler = new Compiler(options, true)
  const part = compiler.node(node, options.path ?? 'body.filter', 1)
  return { where: part.request ?? 'true', having: part.session ?? 'true', params: compiler.params }
}

/** A compiled subtree; an absent side means "no condition" (true). */
interface Part {
  request?: string
  session?: string
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const show = (key: string) => (key.length > 64 ? `${key.slice(0, 61)}...` : key)
const at = (path: string, key: string) => `${path}.${show(key)}`

function onlyKey(value: unknown, path: string, what: string): [string, unknown] {
  if (!isObject(value)) throw badRequest(`${path}: must be an object with one ${what}`)
  const keys = Object.keys(value)
  if (keys.length !== 1) {
    throw badRequest(`${path}: must have exactly one ${what}, found ${keys.length}`)
  }
  const key = keys[0] as string
  return [key, value[key]]
}

const andJoin = (a?: string, b?: string) => (a && b ? `(${a} AND ${b})` : (a ?? b))

class Compiler {
  readonly params: Record<string, unknown> = {}
  private readonly prefix: string
  private readonly sessions: boolean
  private leaves = 0
  private wildcards = 0

  constructor(options: CompileOptions, sessions: boolean) {
    this.prefix = options.prefix ?? 'f'
    if (!PREFIX.test(this.prefix)) throw new Error(`filter prefix ${this.prefix} is not an identifier`)
    this.sessions = sessions
  }

  node(node: unknown, path: string, depth: number): Part {
    if (depth > MAX_DEPTH) throw badRequest(`${path}: the filter nests deeper than ${MAX_DEPTH} levels`)
    if (node === 'all') return this.countLeaf(path, {})
    if (!isObject(node)) {
      throw badRequest(`${path}: must be "all", {}, a condition or a {left, operator, right} branch`)
    }
    const keys = Object.keys(node)
    if (keys.length === 0) return this.countLeaf(path, {})
    if (Object.hasOwn(node, 'left') || Object.hasOwn(node, 'right') || Object.hasOwn(node, 'operator'))
      return this.branch(node, path, depth)
    return this.countLeaf(path, this.leaf(node, path))
  }

  private countLeaf(path: string, part: Part): Part {
    this.leaves += 1
    if (this.leaves > MAX_LEAVES) {
      throw badRequest(`${path}: the filter has more than ${MAX_LEAVES} conditions`)
    }
    return part
  }

  private branch(node: Json, path: string, depth: number): Part {
    const extra = Object.keys(node).find((key) => key !== 'left' && key !== 'right' && key !== 'operator')
    if (extra !== undefined) {
      throw badRequest(`${at(path, extra)}: is not allowed in a branch; use left, operator and right`)
    }
    const operator = node.operator
    if (operator !== 'and' && operator !== 'or') {
      throw badRequest(`${path}.operator: must be "and" or "or"`)
    }
    if (!Object.hasOwn(node, 'left')) throw badRequest(`${path}.left: is required in a branch`)
    if (!Object.hasOwn(node, 'right')) throw badRequest(`${path}.right: is required in a branch`)
    const left = this.node(node.left, `${path}.left`, depth + 1)
    const right = this.node(node.right, `${path}.right`, depth + 1)
    if (operator === 'and') {
      return { request: andJoin(left.request, right.request), session: andJoin(left.session, right.session) }
    }
    const alwaysTrue = (part: Part) => part.request === undefined && part.session === undefined
    if (alwaysTrue(left) || alwaysTrue(right)) return {}
    const hasRequest = left.request !== undefined || right.request !== undefined
    const hasSession = left.session !== undefined || right.session !== undefined
    if (hasRequest && hasSession) {
      throw badRequest(
        `${path}: "or" cannot combine session-level (${SESSION_TABLE}) and request-level conditions: ` +
          'request conditions choose which requests are aggregated and session conditions filter the ' +
          'aggregated sessions, so they can only be combined with "and"',
      )
    }
    if (hasSession) return { session: `(${left.session} OR ${right.session})` }
    return { request: `(${left.request} OR ${right.request})` }
  }

  private leaf(node: Json, path: string): Part {
    const [table, fields] = onlyKey(node, path, 'table')
    const tablePath = at(path, table)
    if (table === PROPERTIES) return { request: this.property(fields, tablePath) }
    if (table === SESSION_TABLE) {
      if (!this.sessions) throw badRequest(`${tablePath}: is only available in session queries`)
      const [name, condition] = onlyKey(fields, tablePath, 'field')
      const field = SESSION_FIELDS.get(name)
      if (!field) throw unknownField(at(tablePath, name), SESSION_FIELDS)
      return { session: this.condition(field, condition, at(tablePath, name)) }
    }
    if (table !== REQUEST_TABLE) {
      const tables = [REQUEST_TABLE, PROPERTIES, ...(this.sessions ? [SESSION_TABLE] : [])]
      throw badRequest(`${tablePath}: unknown table; use one of ${tables.join(', ')}`)
    }
    const [name, condition] = onlyKey(fields, tablePath, 'field')
    if (name === PROPERTIES) return { request: this.property(condition, at(tablePath, name)) }
    const field = REQUEST_FIELDS.get(name)
    if (!field) throw unknownField(at(tablePath, name), REQUEST_FIELDS, [PROPERTIES])
    return { request: this.condition(field, condition, at(tablePath, name)) }
  }

  /** `{"<key>": {op: value}}`: a text condition on one property; a missing key reads as "". */
  private property(value: unknown, path: string): string {
    const [key, condition] = onlyKey(value, path, 'property name')
    const keyPath = at(path, key)
    if (key.length > MAX_TEXT_LENGTH) throw badRequest(`${keyPath}: property name is too long`)
    // Helicone's session properties read the session, however the request arrived.
    const column = isSessionProperty(key)
      ? SESSION_PROPERTIES[key]
      : `properties[${this.bind('String', key)}]`
    return this.condition({ column, type: 'text' }, condition, keyPath)
  }

  private condition(field: FieldDef, condition: unknown, path: string): string {
    const [given, value] = onlyKey(condition, path, 'operator')
    const opPath = at(path, given)
    const op = OPERATOR_ALIASES.get(given) ?? given
    const allowed = OPERATORS[field.type]
    if (!allowed.includes(op)) {
      throw badRequest(
        `${opPath}: unknown operator for a ${field.type} field; use one of ${allowed.join(', ')}`,
      )
    }
    const column = field.column
    switch (field.type) {
      case 'text':
        return this.text(field, op, value, opPath)
      case 'number': {
        if (typeof value !== 'number' || !Number.isFinite(value))
          throw badRequest(`${opPath}: must be a number`)
        // As text: the client refuses to send numbers beyond 2^53, which JSON allows.
        return `${column} ${COMPARISONS[op]} ${this.bind('Float64', String(value))}`
      }
      case 'timestamp': {
        const ms = timestampMs(value, opPath)
        return `${column} ${COMPARISONS[op]} fromUnixTimestamp64Milli(${this.bind('Int64', ms)}, 'UTC')`
      }
      case 'boolean': {
        if (typeof value !== 'boolean') throw badRequest(`${opPath}: must be true or false`)
        return `${column} = ${this.bind('Bool', value)}`
      }
    }
  }

  private text(field: FieldDef, op: string, given: unknown, path: string): string {
    if (typeof given !== 'string') throw badRequest(`${path}: must be a string`)
    // A UUID column is matched as its text, which is lower case: so is the value.
    const value = field.uuid ? given.toLowerCase() : given
    if (value.length > MAX_TEXT_LENGTH) {
      throw badRequest(`${path}: must be at most ${MAX_TEXT_LENGTH} characters`)
    }
    if (field.uuid && (op === 'equals' || op === 'not-equals')) {
      if (!UUID.test(value)) throw badRequest(`${path}: must be a UUID`)
      return `${field.column} ${COMPARISONS[op]} ${this.bind('UUID', value)}`
    }
    if ((op === 'like' || op === 'ilike') && /(^|[^\\])(\\\\)*\\$/.test(value)) {
      throw badRequest(`${path}: ends with an unfinished escape; write \\\\ for a literal backslash`)
    }
    if (op === 'like' || op === 'ilike') this.countWildcards(value, path)
    const column = field.uuid ? `toString(${field.column})` : field.column
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

  private countWildcards(pattern: string, path: string): void {
    const { any, one } = wildcards(pattern)
    if (one > MAX_PATTERN_UNDERSCORES) {
      throw badRequest(
        `${path}: holds ${one} _ wildcards; at most ${MAX_PATTERN_UNDERSCORES} per pattern (write \\_ for a literal _)`,
      )
    }
    this.wildcards += any + one
    if (this.wildcards > MAX_FILTER_WILDCARDS) {
      throw badRequest(
        `${path}: the filter's like and ilike patterns hold more than ${MAX_FILTER_WILDCARDS} wildcards (% and _) in all`,
      )
    }
  }

  private bind(type: string, value: unknown): string {
    const name = `${this.prefix}${Object.keys(this.params).length}`
    this.params[name] = value
    return `{${name}:${type}}`
  }
}

/** Unescaped `%` and `_` of a like pattern (a backslash makes the next character literal). */
function wildcards(pattern: string): { any: number; one: number } {
  let any = 0
  let one = 0
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]
    if (c === '\\') i += 1
    else if (c === '%') any += 1
    else if (c === '_') one += 1
  }
  return { any, one }
}

const COMPARISONS: Record<string, string> = {
  equals: '=',
  'not-equals': '!=',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
}

function unknownField(path: string, fields: ReadonlyMap<string, FieldDef>, extra: string[] = []) {
  return badRequest(`${path}: unknown field; use one of ${[...fields.keys(), ...extra].join(', ')}`)
}

/** Unix milliseconds or an ISO 8601 date or date-time with an explicit offset. */
function timestampMs(value: unknown, path: string): number {
  let ms: number
  if (typeof value === 'number' && Number.isInteger(value)) ms = value
  else if (typeof value === 'string' && ISO_TIMESTAMP.test(value)) ms = Date.parse(value)
  else {
    throw badRequest(`${path}: must be Unix milliseconds or an ISO 8601 timestamp with an offset`)
  }
  if (!Number.isFinite(ms) || ms < MIN_TIME_MS || ms > MAX_TIME_MS) {
    throw badRequest(`${path}: must be between 1900-01-01 and 2299-12-31`)
  }
  return ms
}
