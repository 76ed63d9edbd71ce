/**
 * Which ClickHouse functions callers' SQL may use, and why the others may not. This file holds the
 * review: the rules below. `npm run derive:sql-functions` applies them to the functions the running
 * ClickHouse has (`system.functions`) and writes allowed-functions.json, the allowlist Tally
 * enforces. A function a later ClickHouse adds is in no list until someone runs the script and
 * reads what it adds: until then it is refused. A test fails when the server's functions and the
 * committed list disagree.
 */
import allowed from './allowed-functions.json' with { type: 'json' }

/** Whole categories of system.functions that are never allowed, with the reason a caller reads. */
const DENIED_CATEGORIES = new Map<string, string>(
  Object.entries({
    AI: 'it calls a language model over the network',
    Dictionary: "it reads the server's dictionaries, which may hold anyone's data",
    'Embedded Dictionary': "it reads dictionaries from the server's files",
    Introspection: "it reads the server's memory, threads, logs or storage",
    Internal: 'it is internal to ClickHouse',
  }),
)

const FILES = "it reads the server's files"
const HOST = 'it tells about the host or the server (names, ports, paths, disks)'
const SETTINGS = "it reads the server's configuration"
const CATALOGUE = 'it reads the catalogue of databases beyond what your query may see'
const UNBOUNDED =
  'its work per row grows without bound with its arguments (it would hold the server for minutes)'
const SQL_IN_A_STRING =
  'it runs the column expressions written in its structure string, which Tally cannot check'

/** Single functions (and so their aliases) that are never allowed. */
const DENIED_FUNCTIONS = new Map<string, string>(
  Object.entries({
    file: FILES,
    catboostEvaluate: FILES,
    showCertificate: FILES,
    naiveBayesClassifier: FILES,
    naiveBayesClassifierWithProb: FILES,
    naiveBayesClassifierWithAllProbs: FILES,
    filesystemAvailable: HOST,
    filesystemCapacity: HOST,
    filesystemUnreserved: HOST,
    hostName: HOST,
    FQDN: HOST,
    displayName: HOST,
    getOSKernelVersion: HOST,
    tcpPort: HOST,
    getServerPort: HOST,
    serverUUID: HOST,
    buildId: HOST,
    getMacro: HOST,
    zookeeperSessionUptime: HOST,
    getServerSetting: SETTINGS,
    getMergeTreeSetting: SETTINGS,
    getClientHTTPHeader:
      'it reads the headers of the HTTP request that carries the query, credentials included',
    hasColumnInTable: CATALOGUE,
    getMaxTableNameLengthForDatabase: CATALOGUE,
    joinGet: "it reads Join tables by name, which may hold anyone's data",
    joinGetOrNull: "it reads Join tables by name, which may hold anyone's data",
    generateSerialID: 'it writes counters to Keeper',
    logTrace: "it writes into the server's log",
    fuzzQuery: 'it is a testing tool of ClickHouse',
    structureToProtobufSchema: SQL_IN_A_STRING,
    structureToCapnProtoSchema: SQL_IN_A_STRING,
    sleep: 'it holds a query slot doing nothing',
    sleepEachRow: 'it holds a query slot doing nothing',
    editDistance: UNBOUNDED,
    editDistanceUTF8: UNBOUNDED,
    damerauLevenshteinDistance: UNBOUNDED,
    jaroSimilarity: UNBOUNDED,
    jaroWinklerSimilarity: UNBOUNDED,
    // The same over arrays: range(60000) against itself ran 9 s past a 2 s time limit.
    arrayLevenshteinDistance: UNBOUNDED,
    arrayLevenshteinDistanceWeighted: UNBOUNDED,
    arraySimilarity: UNBOUNDED,
    // Grid functions whose output grows with a small argument (a ring's radius, a resolution
    // step, a box's precision): one h3kRing(cell, 360) call ran 105 s, past max_execution_time
    // and KILL QUERY alike, since the engine checks both between blocks.
    h3kRing: UNBOUNDED,
    h3HexRing: UNBOUNDED,
    h3ToChildren: UNBOUNDED,
    h3Line: UNBOUNDED,
    h3PolygonToCells: UNBOUNDED,
    h3PolygonToCellsWithContainment: UNBOUNDED,
    geohashesInBox: UNBOUNDED,
  }),
)

/**
 * Internal functions plain SQL is written as: `CASE x WHEN … END` becomes caseWithExpression, a
 * `{name:Type}` parameter _CAST(value, 'Type').
 */
const ALLOWED_DESPITE_CATEGORY = new Set(['caseWithExpression', '_CAST'])

/**
 * Names EXPLAIN AST shows as functions that are syntax, not entries of system.functions: `x -> …`,
 * EXISTS (…), untuple(…), GROUPING(…).
 */
const SYNTAX_FUNCTIONS: readonly string[] = ['lambda', 'exists', 'untuple', 'grouping']

/**
 * Table functions (`FROM f(…)`) a caller may use: they make rows out of their arguments alone.
 * Every other one reads files, URLs, other servers, other tables or the server's own storage; and
 * values('x UInt8, y String ALIAS f()', …) runs column expressions written in its structure string.
 */
const ALLOWED_TABLE_FUNCTIONS: readonly string[] = [
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'generate_series',
  'generateSeries',
  'primes',
  'view',
]

/**
 * Functions whose first argument names an aggregate function in a string, which ClickHouse parses
 * and runs, parameters included (arrayReduce('quantile(f())', …)): the string must be a plain name
 * with at most number parameters, and the name must be allowed.
 */
export const AGGREGATE_NAME_IN_A_STRING: readonly string[] = [
  'arrayReduce',
  'arrayReduceInRanges',
  'initializeAggregation',
]

export interface AllowedFunctions {
  /** The ClickHouse version the list was made from. */
  clickhouse: string
  /** Names (aliases included) callers may use, as the server spells them. */
  functions: string[]
  /** Those of them ClickHouse also takes in any letter case. */
  caseInsensitive: string[]
  /** Those of them that are aggregate functions: they may carry combinators (sumIf, uniqStateOrNull). */
  aggregate: string[]
  /** The aggregate combinators of system.aggregate_function_combinators. */
  combinators: string[]
  /** Every other function of the server (aliases included), with the reason it is refused. */
  denied: Record<string, string>
}

const NOT_LISTED = 'it is not on the list of functions Tally allows (docs/data-teams.md)'

/** The committed allowlist, as the checks the guard makes. */
export function allowlist(list: AllowedFunctions = allowed) {
  const lower = (names: Iterable<string>) => new Set([...names].map((name) => name.toLowerCase()))
  const exact = new Set([...list.functions, ...SYNTAX_FUNCTIONS])
  const anyCase = lower(list.caseInsensitive)
  const aggregates = new Set(list.aggregate)
  const aggregatesAnyCase = lower(list.aggregate.filter((name) => anyCase.has(name.toLowerCase())))
  const denied = new Map(Object.entries(list.denied).map(([name, reason]) => [name.toLowerCase(), reason]))
  // Longest first, so that a longer combinator is not read as a shorter one that ends it.
  const combinators = [...list.combinators].sort((a, b) => b.length - a.length)
  const isAggregate = (name: string) => aggregates.has(name) || aggregatesAnyCase.has(name.toLowerCase())

  /** Combinators stripped from the end until an allowed aggregate function remains (sumIfOrNull → sum). */
  function combined(name: string, depth: number): boolean {
    if (depth > 0 && isAggregate(name)) return true
    if (depth >= 8) return false
    return combinators.some(
      (c) => name.length > c.length && name.endsWith(c) && combined(name.slice(0, -c.length), depth + 1),
    )
  }

  return {
    clickhouse: list.clickhouse,
    /** Undefined when `name` may be called; else why not. */
    refuseFunction(name: string): string | undefined {
      if (exact.has(name) || anyCase.has(name.toLowerCase()) || combined(name, 0)) return undefined
      return denied.get(name.toLowerCase()) ?? NOT_LISTED
    },
    refuseTableFunction(name: string): string | undefined {
      if (ALLOWED_TABLE_FUNCTIONS.includes(name)) return undefined
      return 'it reads data from outside your query (files, URLs, other servers or tables, the server itself)'
    },
    /**
     * A bare identifier that names a refused function: ClickHouse calls some of them without
     * parentheses (`SELECT current_user`), so such a name is refused as a column too.
     */
    refuseIdentifier(name: string): string | undefined {
      return denied.get(name.toLowerCase())
    },
  }
}

export type Allowlist = ReturnType<typeof allowlist>

/** A row of system.functions, as the derivation reads it. */
export interface FunctionRow {
  name: string
  alias_to: string
  categories: string
  is_aggregate: number
  case_insensitive: number
}

/**
 * Applies the rules above to a server's functions: the allowlist to commit. An alias follows the
 * function it names (its category is that function's).
 */
export function deriveAllowedFunctions(
  rows: readonly FunctionRow[],
  combinators: readonly string[],
  clickhouse: string,
): AllowedFunctions {
  const byName = new Map(rows.map((row) => [row.name, row]))
  const denied = new Map<string, string>()
  const list: AllowedFunctions = {
    clickhouse,
    functions: [],
    caseInsensitive: [],
    aggregate: [],
    combinators: [...combinators].sort(),
    denied: {},
  }
  for (const row of [...rows].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const target = (row.alias_to && byName.get(row.alias_to)) || row
    // Maps, not objects: a function is called toString, another constructor.
    const reason =
      DENIED_FUNCTIONS.get(row.name) ??
      DENIED_FUNCTIONS.get(target.name) ??
      (ALLOWED_DESPITE_CATEGORY.has(target.name)
        ? undefined
        : target.categories
            .split(',')
            .map((category) => DENIED_CATEGORIES.get(category.trim()))
            .find(Boolean))
    if (reason) {
      denied.set(row.name, reason)
      continue
    }
    list.functions.push(row.name)
    if (row.case_insensitive) list.caseInsensitive.push(row.name)
    if (target.is_aggregate) list.aggregate.push(row.name)
  }
  list.denied = Object.fromEntries(denied)
  return list
}
