/**
 * The filter language's one reading: a filter tree as callers write it (docs/sessions.md) checked
 * and turned into a tree of conditions. Every use starts here — ClickHouse SQL for queries and
 * exports (compile.ts), and the dispatcher's evaluation of a webhook's filter
 * (services/dispatcher/evaluate-filter.ts) — so a tree means the same wherever it is used.
 * Anything invalid is a 400 naming its path.
 */
import { isSessionProperty, REQUEST_TABLE, SESSION_PROPERTIES } from '../clickhouse/request-table.ts'
import { badRequest } from '../errors.ts'
import { TIME_RANGE } from '../timestamp.ts'
import {
  FEEDBACK,
  type FieldDef,
  OPERATOR_ALIASES,
  OPERATORS,
  PROPERTIES,
  REQUEST_FIELDS,
  SCORE_AGGREGATES,
  SCORES,
  type ScoreAggregate,
  SESSION_FIELDS,
  SESSION_TABLE,
} from './fields.ts'

export const MAX_DEPTH = 32
/** As the score API takes them (services/api/scores/schemas.ts). */
const MAX_SCORE_NAME = 200
/**
 * Score conditions in one filter: each reads the organization's scores in a subquery of its own
 * (an aggregate, its chosen requests too), where a column condition costs nothing more.
 */
export const MAX_SCORE_LEAVES = 50
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
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

type Operator =
  | 'equals'
  | 'not-equals'
  | 'like'
  | 'ilike'
  | 'contains'
  | 'not-contains'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'

/** What a condition on a score compares: its number (numeric or boolean 1/0), boolean or category. */
export type ScoreValueType = 'number' | 'boolean' | 'text'

/**
 * What a condition reads: a column (request or session level), one property of a request, or a
 * score by name: of the request, of the session, or (`aggregate`) avg/min/max of the scores of the
 * session's requests that the request-level conditions choose.
 */
export type Subject =
  | { kind: 'column'; level: 'request' | 'session'; field: FieldDef }
  | { kind: 'property'; key: string }
  | {
      kind: 'score'
      level: 'request' | 'session'
      name: string
      type: ScoreValueType
      aggregate?: ScoreAggregate
    }

/**
 * One condition, its value checked and normalised: text (lower case for a UUID column), a finite
 * number, Unix milliseconds for a timestamp, or a boolean.
 */
export interface Condition {
  kind: 'condition'
  subject: Subject
  op: Operator
  value: string | number | boolean
  /** Where it stands in the request (`body.filter.….gt`), for a message about it; absent when built. */
  path?: string
}

export type FilterTree =
  | { kind: 'all' }
  | { kind: 'and' | 'or'; left: FilterTree; right: FilterTree }
  | Condition
  /** The request has this property (webhook propertyFilters; not written in the JSON language). */
  | { kind: 'has-property'; key: string }
  /** Nothing matches (a webhook filter that cannot match; not written in the JSON language). */
  | { kind: 'none' }

export interface ParseOptions {
  /** Where the filter sits in the request, for error messages. Default `body.filter`. */
  path?: string
  /** Session-level fields (`sessions_request_response_rmt`) are allowed: session queries. */
  sessions?: boolean
}

/** Checks a filter tree and reads it; a 400 naming the path for anything invalid. */
export function parseFilter(node: unknown, options: ParseOptions = {}): FilterTree {
  return new Parser(options.sessions ?? false).node(node, options.path ?? 'body.filter', 1)
}

/** The levels a tree's conditions are at; an empty set is "always true". */
function levelsOf(tree: FilterTree): Set<'request' | 'session'> {
  switch (tree.kind) {
    case 'all':
      return new Set()
    case 'has-property':
    case 'none':
      return new Set(['request'])
    case 'condition':
      return new Set([tree.subject.kind === 'property' ? 'request' : tree.subject.level])
    default:
      return new Set([...levelsOf(tree.left), ...levelsOf(tree.right)])
  }
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A key as a message shows it: at most 64 characters, never half of one. */
const show = (key: string) => {
  const chars = [...key]
  return chars.length > 64 ? `${chars.slice(0, 61).join('')}...` : key
}
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

const ALL: FilterTree = { kind: 'all' }

class Parser {
  private readonly sessions: boolean
  private leaves = 0
  private scores = 0
  private wildcards = 0

  constructor(sessions: boolean) {
    this.sessions = sessions
  }

  node(node: unknown, path: string, depth: number): FilterTree {
    if (depth > MAX_DEPTH) throw badRequest(`${path}: the filter nests deeper than ${MAX_DEPTH} levels`)
    if (node === 'all') return this.countLeaf(path, ALL)
    if (!isObject(node)) {
      throw badRequest(`${path}: must be "all", {}, a condition or a {left, operator, right} branch`)
    }
    const keys = Object.keys(node)
    if (keys.length === 0) return this.countLeaf(path, ALL)
    if (Object.hasOwn(node, 'left') || Object.hasOwn(node, 'right') || Object.hasOwn(node, 'operator'))
      return this.branch(node, path, depth)
    return this.countLeaf(path, this.leaf(node, path))
  }

  private countLeaf(path: string, tree: FilterTree): FilterTree {
    this.leaves += 1
    if (this.leaves > MAX_LEAVES) {
      throw badRequest(`${path}: the filter has more than ${MAX_LEAVES} conditions`)
    }
    return tree
  }

  private branch(node: Json, path: string, depth: number): FilterTree {
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
    // "all" decides an "or" and drops out of an "and".
    if (left.kind === 'all') return operator === 'or' ? ALL : right
    if (right.kind === 'all') return operator === 'or' ? ALL : left
    if (operator === 'or') {
      const levels = new Set([...levelsOf(left), ...levelsOf(right)])
      if (levels.size > 1) {
        throw badRequest(
          `${path}: "or" cannot combine session-level (${SESSION_TABLE}) and request-level conditions: ` +
            'request conditions choose which requests are aggregated and session conditions filter the ' +
            'aggregated sessions, so they can only be combined with "and"',
        )
      }
    }
    return { kind: operator, left, right }
  }

  private leaf(node: Json, path: string): FilterTree {
    const [table, fields] = onlyKey(node, path, 'table')
    const tablePath = at(path, table)
    if (table === PROPERTIES) return this.property(fields, tablePath)
    if (table === SCORES) return this.score(fields, tablePath, 'request')
    if (table === FEEDBACK) return this.scoreCondition(FEEDBACK, fields, tablePath, 'request')
    if (table === SESSION_TABLE) {
      if (!this.sessions) throw badRequest(`${tablePath}: is only available in session queries`)
      const [name, condition] = onlyKey(fields, tablePath, 'field')
      if (name === SCORES) return this.score(condition, at(tablePath, name), 'session')
      if (Object.hasOwn(SCORE_AGGREGATES, name))
        return this.score(condition, at(tablePath, name), 'session', SCORE_AGGREGATES[name])
      const field = SESSION_FIELDS.get(name)
      if (!field)
        throw unknownField(at(tablePath, name), SESSION_FIELDS, [SCORES, ...Object.keys(SCORE_AGGREGATES)])
      return this.condition({ kind: 'column', level: 'session', field }, condition, at(tablePath, name))
    }
    if (table !== REQUEST_TABLE) {
      const tables = [REQUEST_TABLE, PROPERTIES, SCORES, FEEDBACK, ...(this.sessions ? [SESSION_TABLE] : [])]
      throw badRequest(`${tablePath}: unknown table; use one of ${tables.join(', ')}`)
    }
    const [name, condition] = onlyKey(fields, tablePath, 'field')
    if (name === PROPERTIES) return this.property(condition, at(tablePath, name))
    if (name === SCORES) return this.score(condition, at(tablePath, name), 'request')
    if (name === FEEDBACK) return this.scoreCondition(FEEDBACK, condition, at(tablePath, name), 'request')
    const field = REQUEST_FIELDS.get(name)
    if (!field) throw unknownField(at(tablePath, name), REQUEST_FIELDS, [PROPERTIES, SCORES, FEEDBACK])
    return this.condition({ kind: 'column', level: 'request', field }, condition, at(tablePath, name))
  }

  /** `{"<score name>": {op: value}}`: a condition on one score, of the kind `level` and `aggregate` say. */
  private score(
    value: unknown,
    path: string,
    level: 'request' | 'session',
    aggregate?: ScoreAggregate,
  ): FilterTree {
    const [name, condition] = onlyKey(value, path, 'score name')
    return this.scoreCondition(name, condition, at(path, name), level, aggregate)
  }

  /**
   * A condition on the score `name`. Its value says what it compares: a number the score's number
   * (a boolean score is 1 or 0), true or false a boolean score, a string a category. An aggregate
   * compares numbers only.
   */
  private scoreCondition(
    name: string,
    condition: unknown,
    path: string,
    level: 'request' | 'session',
    aggregate?: ScoreAggregate,
  ): Condition {
    // Characters as the score API counts them (code points).
    const length = [...name].length
    if (length === 0 || length > MAX_SCORE_NAME)
      throw badRequest(`${path}: a score name has 1 to ${MAX_SCORE_NAME} characters`)
    this.scores += 1
    if (this.scores > MAX_SCORE_LEAVES)
      throw badRequest(`${path}: the filter has more than ${MAX_SCORE_LEAVES} score and feedback conditions`)
    const [, value] = onlyKey(condition, path, 'operator')
    const type: ScoreValueType =
      typeof value === 'boolean' ? 'boolean' : typeof value === 'string' ? 'text' : 'number'
    if (aggregate && type !== 'number')
      throw badRequest(`${path}: compares the ${aggregate} of numbers; give a number`)
    return this.condition(
      { kind: 'score', level, name, type, ...(aggregate ? { aggregate } : {}) },
      condition,
      path,
    )
  }

  /** `{"<key>": {op: value}}`: a text condition on one property; a missing key reads as "". */
  private property(value: unknown, path: string): FilterTree {
    const [key, condition] = onlyKey(value, path, 'property name')
    const keyPath = at(path, key)
    if (key.length > MAX_TEXT_LENGTH) throw badRequest(`${keyPath}: property name is too long`)
    return this.condition(propertySubject(key), condition, keyPath)
  }

  private condition(subject: Subject, condition: unknown, path: string): Condition {
    const [given, value] = onlyKey(condition, path, 'operator')
    const opPath = at(path, given)
    const op = (OPERATOR_ALIASES.get(given) ?? given) as Operator
    const type =
      subject.kind === 'column' ? subject.field.type : subject.kind === 'score' ? subject.type : 'text'
    const allowed = OPERATORS[type]
    if (!allowed.includes(op)) {
      throw badRequest(`${opPath}: unknown operator for a ${type} field; use one of ${allowed.join(', ')}`)
    }
    const leaf = (v: Condition['value']): Condition => ({
      kind: 'condition',
      subject,
      op,
      value: v,
      path: opPath,
    })
    switch (type) {
      case 'text':
        return leaf(this.text(subject, op, value, opPath))
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value))
          throw badRequest(`${opPath}: must be a number`)
        return leaf(value)
      case 'timestamp':
        return leaf(timestampMs(value, opPath))
      case 'boolean':
        if (typeof value !== 'boolean') throw badRequest(`${opPath}: must be true or false`)
        return leaf(value)
    }
  }

  private text(subject: Subject, op: Operator, given: unknown, path: string): string {
    if (typeof given !== 'string') throw badRequest(`${path}: must be a string`)
    const uuid = subject.kind === 'column' && subject.field.uuid === true
    // A UUID column is matched as its text, which is lower case: so is the value.
    const value = uuid ? given.toLowerCase() : given
    if (value.length > MAX_TEXT_LENGTH) {
      throw badRequest(`${path}: must be at most ${MAX_TEXT_LENGTH} characters`)
    }
    if (uuid && (op === 'equals' || op === 'not-equals') && !UUID.test(value)) {
      throw badRequest(`${path}: must be a UUID`)
    }
    if ((op === 'like' || op === 'ilike') && /(^|[^\\])(\\\\)*\\$/.test(value)) {
      throw badRequest(`${path}: ends with an unfinished escape; write \\\\ for a literal backslash`)
    }
    if (op === 'like' || op === 'ilike') {
      // Any other escape is the engine's own (ClickHouse reads \d as a digit class): refused, so a
      // pattern means the same in a query and in a webhook filter.
      const other = /(?:^|[^\\])(?:\\\\)*\\([^%_\\])/u.exec(value)
      if (other) {
        throw badRequest(
          `${path}: \\${other[1]} is not an escape of like patterns; \\ escapes only %, _ and \\ (write \\\\ for a literal backslash)`,
        )
      }
      this.countWildcards(value, path)
    }
    return value
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
}

/** What a condition on the property `key` reads. */
export function propertySubject(key: string): Subject {
  // Helicone's session properties read the session, however the request arrived.
  if (!isSessionProperty(key)) return { kind: 'property', key }
  return { kind: 'column', level: 'request', field: REQUEST_FIELDS.get(SESSION_PROPERTIES[key]) as FieldDef }
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
  if (!Number.isFinite(ms) || ms < TIME_RANGE.minMs || ms > TIME_RANGE.maxMs) {
    throw badRequest(`${path}: must be between ${TIME_RANGE.first} and ${TIME_RANGE.last}`)
  }
  return ms
}
