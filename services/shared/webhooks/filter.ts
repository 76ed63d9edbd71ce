/**
 * Which events a webhook gets, as one filter tree: its `config.filter` (the filter language of
 * request queries) and its propertyFilters, which are read into the same tree. The dispatcher
 * decides it with the evaluator that agrees with ClickHouse (services/dispatcher/evaluate-filter.ts).
 */
import { isSessionProperty } from '../clickhouse/request-table.ts'
import { type FilterTree, parseFilter, propertySubject } from '../filters/parse.ts'
import type { PropertyFilter } from './payload.ts'

const ALL: FilterTree = { kind: 'all' }
const NONE: FilterTree = { kind: 'none' }

const and = (left: FilterTree, right: FilterTree): FilterTree =>
  left.kind === 'all' ? right : right.kind === 'all' ? left : { kind: 'and', left, right }

/**
 * One `{key, value}`: the property of that key equals the value, and is there (a missing
 * property never matches, even the value ""). Helicone's session properties read the session,
 * which an empty one never matches.
 */
function propertyFilterTree({ key, value }: PropertyFilter): FilterTree {
  const equals: FilterTree = { kind: 'condition', subject: propertySubject(key), op: 'equals', value }
  if (value !== '') return equals
  return isSessionProperty(key) ? NONE : and({ kind: 'has-property', key }, equals)
}

/** A webhook filter's bounds (docs/webhooks.md): conditions, text in all, like/ilike patterns in all. */
const WEBHOOK_FILTER = { conditions: 50, textCharacters: 4_096, patternCharacters: 256 }

const BODIES = new Set(['request_body', 'response_body'])

/**
 * What a webhook's filter may not hold beyond the query language's own rules, or undefined. The
 * dispatcher decides every event of the organization with it, for each of its webhooks, on one
 * thread, so the work per event is bounded: no condition on the bodies (megabytes each), at most
 * 50 conditions holding 4,096 characters of text in all, of which 256 in like/ilike patterns (a
 * pattern costs up to its length times the text's, and every text it reads is at most 4,096
 * characters). The same conditions are fine in a query, which ClickHouse bounds in time.
 */
export function webhookFilterProblem(tree: FilterTree): string | undefined {
  const seen = { conditions: 0, text: 0, patterns: 0 }
  const walk = (node: FilterTree): string | undefined => {
    if (node.kind === 'and' || node.kind === 'or') return walk(node.left) ?? walk(node.right)
    if (node.kind !== 'condition') return undefined
    const at = node.path ?? 'config.filter'
    if (node.subject.kind === 'score') {
      return `${at}: a webhook filter cannot read scores: a request's scores come after it completes`
    }
    if (node.subject.kind === 'column' && BODIES.has(node.subject.field.column)) {
      return `${at}: a webhook filter cannot read the request or response body; filter on properties, model, status or cost`
    }
    seen.conditions += 1
    if (seen.conditions > WEBHOOK_FILTER.conditions) {
      return `${at}: a webhook filter holds at most ${WEBHOOK_FILTER.conditions} conditions`
    }
    if (typeof node.value !== 'string') return undefined
    const length = [...node.value].length
    seen.text += length
    if (seen.text > WEBHOOK_FILTER.textCharacters) {
      return `${at}: a webhook filter's text values hold more than ${WEBHOOK_FILTER.textCharacters} characters in all`
    }
    if (node.op === 'like' || node.op === 'ilike') {
      seen.patterns += length
      if (seen.patterns > WEBHOOK_FILTER.patternCharacters) {
        return `${at}: a webhook filter's like and ilike patterns hold more than ${WEBHOOK_FILTER.patternCharacters} characters in all`
      }
    }
    return undefined
  }
  return walk(tree)
}

/**
 * The tree of a stored webhook. A stored `filter` this version of Tally cannot read (it was
 * checked when the webhook was created) matches nothing, and `problem` says why.
 */
export function webhookFilter(
  propertyFilters: readonly PropertyFilter[],
  filter: unknown,
): { tree: FilterTree; problem?: string } {
  let tree = propertyFilters.map(propertyFilterTree).reduce(and, ALL)
  if (filter === null || filter === undefined) return { tree }
  try {
    tree = and(tree, parseFilter(filter, { path: 'config.filter' }))
    return { tree }
  } catch (err) {
    return { tree: NONE, problem: (err as Error).message }
  }
}
