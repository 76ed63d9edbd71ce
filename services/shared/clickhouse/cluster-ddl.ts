/**
 * One schema, two layouts. The numbered files in schemas/clickhouse are written for one node; this
 * module turns each of their statements into the steps that build the same schema on a cluster
 * (TALLY_CLICKHOUSE_CLUSTER), so single-node and cluster DDL come from the same files:
 *
 * - `CREATE TABLE t … ENGINE = XMergeTree(args)` becomes the shard-local table `t_local` and a
 *   `Distributed` table `t` over it, sharded so that one session's rows live on one shard. Tally's
 *   queries keep reading and writing `t`.
 * - `CREATE MATERIALIZED VIEW … TO t AS SELECT … FROM u` reads and writes the local tables: each
 *   shard aggregates the rows it stores.
 * - `ALTER TABLE t` changes `t_local`, and `t` too when it only changes columns.
 * - `INSERT` (a backfill) runs once, through the Distributed tables, which route the rows.
 *
 * Two ways to reach every node. `on-cluster` (production): `ON CLUSTER` DDL with
 * `Replicated*MergeTree` tables under `{shard}`/`{replica}` macros; ClickHouse's DDL worker and
 * Keeper take each statement to every node. `per-node` (no Keeper, as the embedded server here):
 * plain MergeTree tables, each DDL statement sent by Tally to every node itself; the cluster must
 * then have `internal_replication=false` (one node per shard, or Distributed writing every replica).
 * A statement of another kind has no cluster form: planning throws rather than guess.
 */

export type ClickHouseLayout =
  | { kind: 'single' }
  | {
      kind: 'cluster'
      /** The cluster's name in the servers' `remote_servers`. */
      cluster: string
      /** Tally's database (CLICKHOUSE_DATABASE): the Distributed tables name it. */
      database: string
      ddl: 'on-cluster' | 'per-node'
    }

export const SINGLE_NODE: ClickHouseLayout = { kind: 'single' }

/** One statement of a migration and where it runs. */
export interface MigrationStep {
  sql: string
  /**
   * `each`: on every node (per-node DDL); `one`: on the node Tally talks to (a single node, ON
   * CLUSTER DDL that ClickHouse takes everywhere, or an INSERT through the Distributed tables).
   */
  nodes: 'each' | 'one'
}

/** A name ClickHouse takes unquoted: what the config and the schema files use. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

export function checkIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name))
    throw new Error(`${what} "${name}" is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)`)
  return name
}

/** The shard-local table behind a Distributed table. */
export const localTable = (table: string) => `${table}_local`

/**
 * Which shard a row goes to. Per table, so that a new table must choose: the hash of the
 * organization and the session keeps a session on one shard (its aggregation runs there, and the
 * session_hours rollup of a session lives beside its requests); a request without a session is
 * placed by its id, so that a re-sent id lands beside its first copy and FINAL collapses them.
 * For rows with a session both keys hash the same (UUID, String) pair.
 */
const SHARDING_KEYS: Readonly<Record<string, string>> = {
  request_response_rmt: "cityHash64(organization_id, if(session_id = '', toString(request_id), session_id))",
  session_hours: 'cityHash64(organization_id, session_id)',
  // The metrics rollup: every row of a build on one shard, so that it lands in one part. The insert
  // counts are written by their view beside the requests counted (this key serves the backfill).
  request_hour_inserts: 'cityHash64(organization_id, hour)',
  request_hours: 'cityHash64(organization_id, hour)',
  // The sessions rollup likewise: a build is one part on one shard.
  session_hour_totals: 'cityHash64(organization_id, hour)',
  // Read through joins on the request id, never per shard beside their request: placed by id.
  scores: 'cityHash64(organization_id, id)',
  request_property_updates: 'cityHash64(organization_id, request_id)',
}

/** Where a replicated table keeps its metadata in Keeper: one path per shard and table. */
const replicaPath = (database: string, table: string) => `'/clickhouse/tables/{shard}/${database}/${table}'`

const CREATE_TABLE = /^CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/i
const ENGINE = /\bENGINE\s*=\s*(\w*MergeTree)\b(\s*\(([^()]*)\))?/i
const CREATE_MV =
  /^CREATE\s+MATERIALIZED\s+VIEW\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s+TO\s+([A-Za-z_][A-Za-z0-9_]*)\s+AS\s+([\s\S]+)$/i
const ALTER_TABLE = /^ALTER\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)\s+([\s\S]+)$/i
const INSERT = /^INSERT\s+INTO\s/i
const COLUMN_CLAUSE = /^(ADD|DROP|MODIFY|COMMENT|RENAME)\s+COLUMN\s/i

/**
 * The steps of one migration file's statements in `layout`. `tables` collects the tables the
 * files create, in order (the caller passes the same set through every file): a later file's
 * view or ALTER names them.
 */
export function planStatements(
  statements: readonly string[],
  layout: ClickHouseLayout,
  tables: Set<string> = new Set(),
): MigrationStep[] {
  if (layout.kind === 'single') {
    for (const statement of statements) {
      const table = CREATE_TABLE.exec(statement)?.[1]
      if (table) tables.add(table)
    }
    return statements.map((sql) => ({ sql, nodes: 'one' }))
  }
  const cluster = checkIdentifier(layout.cluster, 'cluster name')
  const database = checkIdentifier(layout.database, 'database')
  const replicated = layout.ddl === 'on-cluster'
  const on = replicated ? ` ON CLUSTER ${cluster}` : ''
  const ddl = (sql: string): MigrationStep => ({ sql, nodes: replicated ? 'one' : 'each' })
  const toLocal = (sql: string) =>
    [...tables].reduce((text, t) => text.replace(new RegExp(`\\b${t}\\b`, 'g'), localTable(t)), sql)

  const steps: MigrationStep[] = []
  for (const statement of statements) {
    const create = CREATE_TABLE.exec(statement)
    if (create) {
      const table = create[1] as string
      const key = SHARDING_KEYS[table]
      if (!key)
        throw new Error(`table ${table} has no sharding key: add it to SHARDING_KEYS (cluster-ddl.ts)`)
      const engine = ENGINE.exec(statement)
      if (!engine) throw new Error(`CREATE TABLE ${table} has no *MergeTree engine, so no cluster form`)
      const [clause, name, , args] = engine as unknown as [string, string, string?, string?]
      const local = localTable(table)
      const engineArgs = replicated
        ? [replicaPath(database, local), "'{replica}'", ...(args?.trim() ? [args.trim()] : [])].join(', ')
        : (args ?? '')
      const localEngine = `ENGINE = ${replicated ? `Replicated${name}` : name}${replicated || args !== undefined ? `(${engineArgs})` : ''}`
      steps.push(
        ddl(
          statement
            .replace(CREATE_TABLE, `CREATE TABLE IF NOT EXISTS ${local}${on} (`)
            .replace(clause, localEngine),
        ),
        ddl(
          `CREATE TABLE IF NOT EXISTS ${table}${on} AS ${local} ` +
            `ENGINE = Distributed('${cluster}', '${database}', '${local}', ${key})`,
        ),
      )
      tables.add(table)
      continue
    }
    const view = CREATE_MV.exec(statement)
    if (view) {
      const [, name, target, select] = view as unknown as [string, string, string, string]
      if (!tables.has(target))
        throw new Error(`materialized view ${name} writes ${target}, which no migration created`)
      steps.push(
        ddl(
          `CREATE MATERIALIZED VIEW IF NOT EXISTS ${name}${on} TO ${localTable(target)} AS ${toLocal(select)}`,
        ),
      )
      continue
    }
    const alter = ALTER_TABLE.exec(statement)
    if (alter) {
      const [, table, rest] = alter as unknown as [string, string, string]
      if (!tables.has(table)) throw new Error(`ALTER TABLE ${table}: no migration created it`)
      steps.push(ddl(`ALTER TABLE ${localTable(table)}${on} ${rest}`))
      const clauses = rest.split(/,\s*(?=[A-Za-z]+\s+[A-Za-z]+\s)/)
      // A Distributed table has columns but no indexes, projections or TTL of its own.
      if (clauses.every((c) => COLUMN_CLAUSE.test(c.trim())))
        steps.push(ddl(`ALTER TABLE ${table}${on} ${rest}`))
      continue
    }
    if (INSERT.test(statement)) {
      steps.push({ sql: statement, nodes: 'one' })
      continue
    }
    throw new Error(`no cluster form for the statement: ${statement.slice(0, 80)}…`)
  }
  return steps
}

/**
 * The migration ledger's tables in `layout`. On a cluster with ON CLUSTER DDL one replicated
 * ledger serves every node (one Keeper path for all shards); per node, the ledger lives on the
 * node Tally talks to (the first of TALLY_CLICKHOUSE_CLUSTER_NODES' order does not matter: every
 * process uses CLICKHOUSE_URL's node).
 */
export function ledgerDdl(layout: ClickHouseLayout): string[] {
  const tables = {
    schema_migrations: '(version UInt32, name String, applied_at DateTime64(3) DEFAULT now64(3))',
    schema_migration_steps:
      '(version UInt32, name String, step UInt32, statement_sha256 String, applied_at DateTime64(3) DEFAULT now64(3))',
  }
  const order = { schema_migrations: 'version', schema_migration_steps: '(version, step)' }
  return (Object.keys(tables) as (keyof typeof tables)[]).map((table) => {
    if (layout.kind === 'cluster' && layout.ddl === 'on-cluster') {
      const cluster = checkIdentifier(layout.cluster, 'cluster name')
      const database = checkIdentifier(layout.database, 'database')
      return (
        `CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER ${cluster} ${tables[table]} ` +
        `ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/${database}/${table}', '{shard}-{replica}') ` +
        `ORDER BY ${order[table]}`
      )
    }
    return `CREATE TABLE IF NOT EXISTS ${table} ${tables[table]} ENGINE = ReplacingMergeTree ORDER BY ${order[table]}`
  })
}

/** `ON CLUSTER <name>` for the database and views DDL Tally runs outside the files; '' otherwise. */
export function onCluster(layout: ClickHouseLayout): string {
  return layout.kind === 'cluster' && layout.ddl === 'on-cluster'
    ? ` ON CLUSTER ${checkIdentifier(layout.cluster, 'cluster name')}`
    : ''
}
