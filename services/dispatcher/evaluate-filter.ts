/**
 * A parsed filter tree evaluated on one request event, as ClickHouse evaluates the SQL that
 * services/shared/filters/compile.ts writes for it on the stored row: the dispatcher decides with
 * it which events a webhook gets. test/filters/evaluate-vs-clickhouse.test.ts compares the two on
 * random trees.
 */
import type { RequestEvent } from '../shared/events/request-event.ts'
import type { Condition, FilterTree } from '../shared/filters/parse.ts'

/**
 * Whether the event matches. Only request-level trees: a session-level condition (an aggregate)
 * cannot be decided on one request and throws.
 */
export function matchesTree(tree: FilterTree, event: RequestEvent): boolean {
  switch (tree.kind) {
    case 'all':
      return true
    case 'none':
      return false
    case 'and':
      return matchesTree(tree.left, event) && matchesTree(tree.right, event)
    case 'or':
      return matchesTree(tree.left, event) || matchesTree(tree.right, event)
    case 'has-property':
      return Object.hasOwn(event.properties, tree.key)
    case 'condition':
      return matches(tree, event)
  }
}

function matches(condition: Condition, event: RequestEvent): boolean {
  const { subject, op, value } = condition
  if (subject.kind === 'property') {
    // A missing property reads as "", as ClickHouse's map lookup does.
    const text = Object.hasOwn(event.properties, subject.key) ? (event.properties[subject.key] as string) : ''
    return textMatches(text, condition, event)
  }
  // Scores arrive after their request: never in the request's own event.
  if (subject.kind === 'score')
    throw new Error('a score condition cannot be decided on a request as it completes')
  const { field } = subject
  if (subject.level !== 'request' || !field.event) {
    throw new Error(`a ${subject.level}-level condition cannot be decided on one request`)
  }
  const given = event[field.event]
  // A NULL column (no time to first token) matches no condition, as SQL's NULL does: the
  // language has no negation, so NULL reads as false everywhere in a tree.
  if (given === null || given === undefined) return false
  switch (field.type) {
    case 'text':
      // A UUID column compares as its lower-case text.
      return textMatches(field.uuid ? String(given).toLowerCase() : String(given), condition, event)
    case 'number':
      return compare(given as number, op, value as number)
    case 'timestamp':
      return compare((given as Date).getTime(), op, value as number)
    case 'boolean':
      return given === value
  }
}

function compare(a: number, op: Condition['op'], b: number): boolean {
  switch (op) {
    case 'equals':
      return a === b
    case 'not-equals':
      return a !== b
    case 'gt':
      return a > b
    case 'gte':
      return a >= b
    case 'lt':
      return a < b
    case 'lte':
      return a <= b
    default:
      throw new Error(`operator ${op} does not compare numbers`)
  }
}

/**
 * Folded texts, computed once: an event's for every condition and webhook that reads them (the
 * dispatcher decides each event for each of the organization's webhooks), a condition's value
 * for every event.
 */
const foldedTexts = new WeakMap<RequestEvent, Map<string, string>>()
const foldedValues = new WeakMap<Condition, string>()

function foldedText(event: RequestEvent, text: string): string {
  let texts = foldedTexts.get(event)
  if (!texts) {
    texts = new Map()
    foldedTexts.set(event, texts)
  }
  let folded = texts.get(text)
  if (folded === undefined) {
    folded = foldCase(text)
    texts.set(text, folded)
  }
  return folded
}

function foldedValue(condition: Condition, value: string): string {
  let folded = foldedValues.get(condition)
  if (folded === undefined) {
    folded = foldCase(value)
    foldedValues.set(condition, folded)
  }
  return folded
}

function textMatches(text: string, condition: Condition, event: RequestEvent): boolean {
  const value = condition.value as string
  switch (condition.op) {
    case 'equals':
      return text === value
    case 'not-equals':
      return text !== value
    case 'contains':
      return foldedText(event, text).includes(foldedValue(condition, value))
    case 'not-contains':
      return !foldedText(event, text).includes(foldedValue(condition, value))
    case 'like':
      return likePattern(value, false).test(text)
    case 'ilike': {
      // ClickHouse runs `%text%` as a substring search, any other pattern as a regular expression
      // (re2, case folding): the two compare case differently (ς and σ, ſ and s).
      const needle = substringOf(value)
      return needle === undefined
        ? likePattern(value, true).test(text)
        : foldedText(event, text).includes(foldedValue(condition, needle))
    }
    default:
      throw new Error(`operator ${condition.op} does not compare text`)
  }
}

/**
 * Text as ClickHouse's case-insensitive UTF-8 search (contains, ilike) compares it, measured on
 * the engine (test/filters/evaluate-vs-clickhouse.test.ts): each code point lower-cased alone —
 * not Unicode case folding, so ς and σ differ — and title-case letters (ǅ) only match themselves.
 * Code points whose lower case is longer or shorter in UTF-8 (ẞ and ß, Ⱥ and ⱥ, the Kelvin sign)
 * are matched exactly: ClickHouse's own answers for them depend on where they stand in the text
 * (its documentation says lowerUTF8 may be wrong for them), so no evaluator can agree with it.
 */
function foldCase(text: string): string {
  // ASCII folds the same way in both, one character at a time.
  if (ASCII.test(text)) return text.toLowerCase()
  let out = ''
  for (const c of text) {
    const lower = TITLE_CASE.test(c) ? c : c.toLowerCase()
    out += [...lower].length === 1 && Buffer.byteLength(lower) === Buffer.byteLength(c) ? lower : c
  }
  return out
}

const TITLE_CASE = /^\p{Lt}$/u
const ASCII = /^\p{ASCII}*$/u

const patterns = new Map<string, RegExp>()

type Token = { kind: 'any' } | { kind: 'one' } | { kind: 'char'; c: string }

/** A LIKE pattern read: `%` any text, `_` one code point, `\\` makes the next character itself. */
function tokens(pattern: string): Token[] {
  const out: Token[] = []
  const chars = [...pattern]
  for (let i = 0; i < chars.length; i += 1) {
    const c = chars[i] as string
    if (c === '\\' && i + 1 < chars.length) out.push({ kind: 'char', c: chars[++i] as string })
    else if (c === '%') out.push({ kind: 'any' })
    else if (c === '_') out.push({ kind: 'one' })
    else out.push({ kind: 'char', c })
  }
  return out
}

/** The text of a pattern `%text%` (text without wildcards, escapes undone); else undefined. */
function substringOf(pattern: string): string | undefined {
  const read = tokens(pattern)
  const inner = read.slice(1, -1)
  if (read.length < 3 || read[0]?.kind !== 'any' || read.at(-1)?.kind !== 'any') return undefined
  if (!inner.every((t) => t.kind === 'char')) return undefined
  return inner.map((t) => (t as { c: string }).c).join('')
}

/**
 * A LIKE pattern as a regular expression: `%` any text, `_` one code point, `\` escapes. Written
 * so that it cannot backtrack out of control: each piece between two `%` is found at its leftmost
 * place inside a lookahead (which never backtracks once it matched) and consumed by a
 * back-reference — leftmost is always right for pieces of fixed length — so a match costs at most
 * the text's length times the pattern's, however many `%` it holds.
 */
function likePattern(pattern: string, ignoreCase: boolean): RegExp {
  const key = `${ignoreCase ? 'i' : 'c'}${pattern}`
  let re = patterns.get(key)
  if (!re) {
    const pieces: string[] = ['']
    for (const t of tokens(pattern)) {
      if (t.kind === 'any') pieces.push('')
      else pieces[pieces.length - 1] += t.kind === 'one' ? '[^]' : literal(t.c)
    }
    let source = `^${pieces[0]}`
    if (pieces.length > 1) {
      let group = 0
      for (const piece of pieces.slice(1, -1)) {
        if (piece === '') continue
        group += 1
        source += `(?=([^]*?${piece}))\\${group}`
      }
      source += `[^]*${pieces.at(-1)}`
    }
    re = new RegExp(`${source}$`, ignoreCase ? 'iu' : 'u')
    // Patterns come from webhook filters: a few hundred at most; the bound only keeps it a cache.
    if (patterns.size >= 10_000) patterns.clear()
    patterns.set(key, re)
  }
  return re
}

/** A character as itself in a `u` regular expression (which refuses needless escapes such as `\-`). */
const literal = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')
