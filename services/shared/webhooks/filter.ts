/**
 * Which events a webhook gets, as one filter tree: its `config.filter` (the filter language of
 * request queries) and its propertyFilters, which are read into the same tree. The dispatcher
 * decides it with the evaluator that agrees with ClickHouse (services/shared/filters/evaluate.ts).
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
