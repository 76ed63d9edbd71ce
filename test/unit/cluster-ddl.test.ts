import { describe, expect, it } from 'vitest'
import { type ClickHouseLayout, planStatements } from '../../services/shared/clickhouse/cluster-ddl.ts'
import { loadConfig } from '../../services/shared/config.ts'

const PER_NODE: ClickHouseLayout = { kind: 'cluster', cluster: 'c', database: 'd', ddl: 'per-node' }
const ON_CLUSTER: ClickHouseLayout = { ...PER_NODE, ddl: 'on-cluster' }

const FILE = [
  'CREATE TABLE IF NOT EXISTS session_hours (organization_id UUID, session_id String, n SimpleAggregateFunction(max, UInt32)) ENGINE = AggregatingMergeTree ORDER BY (organization_id, session_id)',
  'CREATE TABLE IF NOT EXISTS request_response_rmt (organization_id UUID, request_id UUID, session_id String, v DateTime) ENGINE = ReplacingMergeTree(v) ORDER BY request_id',
  'CREATE MATERIALIZED VIEW IF NOT EXISTS mv TO session_hours AS SELECT organization_id, session_id, max(1) AS n FROM request_response_rmt GROUP BY organization_id, session_id',
  "ALTER TABLE request_response_rmt ADD COLUMN IF NOT EXISTS a String DEFAULT '', ADD COLUMN IF NOT EXISTS b String DEFAULT ''",
  'ALTER TABLE request_response_rmt ADD INDEX IF NOT EXISTS i a TYPE bloom_filter GRANULARITY 4',
  'INSERT INTO session_hours SELECT organization_id, session_id, 1 FROM request_response_rmt',
]

describe('cluster DDL from the single-node statements', () => {
  it('leaves them as they are on one node', () => {
    expect(planStatements(FILE, { kind: 'single' })).toEqual(FILE.map((sql) => ({ sql, nodes: 'one' })))
  })

  it('per node: local tables, Distributed tables over them, views and ALTERs on the local ones', () => {
    const steps = planStatements(FILE, PER_NODE)
    expect(steps.map((s) => s.nodes)).toEqual([
      'each',
      'each',
      'each',
      'each',
      'each',
      'each',
      'each',
      'each',
      'one',
    ])
    expect(steps.map((s) => s.sql.slice(0, 71))).toEqual([
      'CREATE TABLE IF NOT EXISTS session_hours_local (organization_id UUID, s',
      'CREATE TABLE IF NOT EXISTS session_hours AS session_hours_local ENGINE ',
      'CREATE TABLE IF NOT EXISTS request_response_rmt_local (organization_id ',
      'CREATE TABLE IF NOT EXISTS request_response_rmt AS request_response_rmt',
      'CREATE MATERIALIZED VIEW IF NOT EXISTS mv TO session_hours_local AS SEL',
      'ALTER TABLE request_response_rmt_local ADD COLUMN IF NOT EXISTS a Strin',
      'ALTER TABLE request_response_rmt ADD COLUMN IF NOT EXISTS a String DEFA',
      'ALTER TABLE request_response_rmt_local ADD INDEX IF NOT EXISTS i a TYPE',
      'INSERT INTO session_hours SELECT organization_id, session_id, 1 FROM re',
    ])
    expect(steps[0]?.sql).toContain('ENGINE = AggregatingMergeTree ORDER BY')
    expect(steps[1]?.sql).toContain(
      "Distributed('c', 'd', 'session_hours_local', cityHash64(organization_id, session_id))",
    )
    expect(steps[2]?.sql).toContain('ENGINE = ReplacingMergeTree(v)')
    expect(steps[4]?.sql).toContain('FROM request_response_rmt_local GROUP BY')
  })

  it('ON CLUSTER: replicated engines under the macros, every statement from one node', () => {
    const steps = planStatements(FILE, ON_CLUSTER)
    expect(steps.every((s) => s.nodes === 'one')).toBe(true)
    expect(steps[0]?.sql).toContain(
      'CREATE TABLE IF NOT EXISTS session_hours_local ON CLUSTER c (organization_id UUID',
    )
    expect(steps[0]?.sql).toContain(
      "ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/d/session_hours_local', '{replica}') ORDER BY",
    )
    expect(steps[2]?.sql).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/d/request_response_rmt_local', '{replica}', v)",
    )
    expect(steps[4]?.sql).toMatch(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS mv ON CLUSTER c TO session_hours_local AS /,
    )
    expect(steps[8]?.sql).toBe(FILE[5])
  })

  it('refuses a statement without a cluster form, and a table without a sharding key', () => {
    expect(() => planStatements(['OPTIMIZE TABLE request_response_rmt FINAL'], PER_NODE)).toThrow(
      'no cluster form for the statement',
    )
    expect(() =>
      planStatements(
        ['CREATE TABLE IF NOT EXISTS other (id UInt32) ENGINE = MergeTree ORDER BY id'],
        PER_NODE,
      ),
    ).toThrow('table other has no sharding key')
    expect(() => planStatements(['ALTER TABLE unknown ADD COLUMN x String'], PER_NODE)).toThrow(
      'ALTER TABLE unknown: no migration created it',
    )
    expect(() => planStatements([], { ...PER_NODE, cluster: 'c; DROP' })).toThrow('not a plain identifier')
  })
})

describe('the cluster variables', () => {
  const url = 'http://tally:secret@127.0.0.1:8123'
  it('refuse a configuration that cannot work, naming the variable', () => {
    expect(() => loadConfig({ TALLY_CLICKHOUSE_CLUSTER: 'c' })).toThrow('needs CLICKHOUSE_URL')
    expect(() => loadConfig({ CLICKHOUSE_URL: url, TALLY_CLICKHOUSE_CLUSTER: 'a-b' })).toThrow(
      'TALLY_CLICKHOUSE_CLUSTER: must be a plain identifier',
    )
    expect(() => loadConfig({ CLICKHOUSE_URL: url, TALLY_CLICKHOUSE_CLUSTER_NODES: url })).toThrow(
      'only with TALLY_CLICKHOUSE_CLUSTER',
    )
    const cluster = { CLICKHOUSE_URL: url, TALLY_CLICKHOUSE_CLUSTER: 'c' }
    expect(() =>
      loadConfig({
        ...cluster,
        TALLY_CLICKHOUSE_CLUSTER_NODES: 'http://127.0.0.1:8124,http://127.0.0.1:8125',
      }),
    ).toThrow('must include the node of CLICKHOUSE_URL')
    expect(() => loadConfig({ ...cluster, TALLY_CLICKHOUSE_CLUSTER_NODES: 'ftp://x' })).toThrow(
      'must be comma-separated http(s) URLs',
    )
  })

  it('read the nodes as a list, and no cluster when unset', () => {
    const config = loadConfig({
      CLICKHOUSE_URL: url,
      TALLY_CLICKHOUSE_CLUSTER: 'c',
      TALLY_CLICKHOUSE_CLUSTER_NODES: ` ${url} , http://tally:secret@127.0.0.1:8124 `,
    })
    expect(config.TALLY_CLICKHOUSE_CLUSTER_NODES).toEqual([url, 'http://tally:secret@127.0.0.1:8124'])
    expect(loadConfig({}).TALLY_CLICKHOUSE_CLUSTER).toBeUndefined()
    expect(loadConfig({}).TALLY_CLICKHOUSE_CLUSTER_NODES).toEqual([])
  })
})
