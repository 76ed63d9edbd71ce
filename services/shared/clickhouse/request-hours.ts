import { randomInt } from 'node:crypto'
import type { Logger } from '../logger.ts'
import { counter } from '../metrics.ts'
import type { ClickHouseClient } from './client.ts'
import { REQUEST_TABLE } from './request-table.ts'

/**
 * The metrics rollup (schemas/clickhouse/0004_request_hours.sql): per organization and closed
 * hour, the hour's requests aggregated once per request by the columns below. An hour is used
 * only while its newest build read as many rows as request_hour_inserts says were written (every
 * copy counted); otherwise the metrics query reads that hour's raw rows. So the rollup is never
 * wrong, only sometimes not used.
 */
export const ROLLUP_TABLE = 'request_hours'
export const INSERTS_TABLE = 'request_hour_inserts'

/** The columns a rollup row is grouped by: what a metrics dimension or filter may use on it. */
export const ROLLUP_COLUMNS = ['provider', 'model', 'status', 'prompt_id', 'prompt_version'] as const

const HOUR_MS = 3_600_000

const built = counter(
  'tally_metrics_rollup_builds_total',
  'Hours of the metrics rollup built by ingest, one build each',
)
const failed = counter(
  'tally_metrics_rollup_build_failures_total',
  'Builds of an hour, or rounds, of the metrics rollup that failed (tried again next round)',
)

/**
 * One hour of one organization, built in one statement: the raw rows read once (no FINAL), each
 * request reduced to its newest copy (argMax by ingested_at, as ReplacingMergeTree keeps it), then
 * grouped; the GROUPING SETS' hour-only row is the build's total row, carrying how many rows were
 * read. Every value is a parameter; `build` is new for every attempt, so a retried insert that had
 * landed after all is never counted twice (only the newest build is read).
 */
const BUILD = `
INSERT INTO ${ROLLUP_TABLE}
SELECT
  {org:UUID} AS organization_id,
  toDateTime({hour:UInt32}, 'UTC') AS hour,
  {build:UInt64} AS build,
  grouping(provider) AS is_total,
  if(is_total = 1, sum(copies), 0) AS covered_rows,
  if(is_total = 1, (SELECT sum(rows) FROM ${INSERTS_TABLE}
                    WHERE organization_id = {org:UUID} AND hour = toDateTime({hour:UInt32}, 'UTC')), 0) AS inserts_seen,
  provider, model, status, prompt_id, prompt_version,
  count() AS requests,
  sum(cost) AS cost,
  sum(prompt_tokens) AS prompt_tokens,
  sum(completion_tokens) AS completion_tokens,
  sum(total_tokens) AS total_tokens,
  sum(latency) AS latency_sum,
  groupArray(latency) AS latencies,
  countIf(status < 200 OR status >= 400) AS errors,
  uniqExactStateIf(user_id, user_id != '') AS users,
  uniqExactStateIf(session_id, session_id != '') AS sessions
FROM (
  SELECT copies,
    r.1 AS provider, r.2 AS model, r.3 AS status, r.4 AS prompt_id, r.5 AS prompt_version,
    r.6 AS cost, r.7 AS prompt_tokens, r.8 AS completion_tokens, r.9 AS total_tokens,
    r.10 AS latency, r.11 AS user_id, r.12 AS session_id
  FROM (
    SELECT count() AS copies,
      argMax((provider, model, status, prompt_id, prompt_version, cost, prompt_tokens,
              completion_tokens, total_tokens, latency, user_id, session_id), ingested_at) AS r
    FROM ${REQUEST_TABLE}
    WHERE organization_id = {org:UUID}
      AND request_created_at >= toDateTime64({hour:UInt32}, 3, 'UTC')
      AND request_created_at < toDateTime64({hour:UInt32} + 3600, 3, 'UTC')
    -- The sorting key's own order: aggregated as read, in bounded memory.
    GROUP BY organization_id, request_created_at, request_id
  )
)
GROUP BY GROUPING SETS ((provider, model, status, prompt_id, prompt_version), ())`

/**
 * Closed hours whose newest build does not match the rows written since: never built, or written
 * to after the build. An hour whose count did not change since its newest build is not rebuilt
 * even when it does not match (a redelivered copy that merges removed makes it so for good: such
 * an hour is read raw).
 */
const STALE = `
SELECT toString(i.organization_id) AS org, toUInt32(i.hour) AS hour
FROM (
  SELECT organization_id, hour, sum(rows) AS rows FROM ${INSERTS_TABLE}
  WHERE hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
  GROUP BY organization_id, hour
) AS i
LEFT JOIN (
  SELECT organization_id, hour, argMax(covered_rows, build) AS covered, argMax(inserts_seen, build) AS seen
  FROM ${ROLLUP_TABLE}
  WHERE is_total = 1 AND hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
  GROUP BY organization_id, hour
) AS b ON i.organization_id = b.organization_id AND i.hour = b.hour
WHERE i.rows != b.covered AND i.rows != b.seen
ORDER BY i.hour DESC
LIMIT {per_org:UInt32} BY i.organization_id
LIMIT {max:UInt32}
SETTINGS join_use_nulls = 0`

export interface RollupOptions {
  /** Hours older than this are not built (queries read them raw). */
  horizonMs: number
  /** An hour is built once it ended this long ago. */
  settleMs: number
  /** Hours built per round at most. */
  maxHours: number
  /** Hours of one organization built per round at most: one busy organization cannot take a round. */
  maxHoursPerOrg: number
  /** Each build's memory limit (ClickHouse's max_memory_usage). */
  memoryBytes: number
  /** Each statement's time limit (ClickHouse's max_execution_time). */
  statementTimeoutMs: number
}

/** Builds one hour of one organization's rollup. */
export async function buildHour(
  client: ClickHouseClient,
  organizationId: string,
  hourMs: number,
  limits: Pick<RollupOptions, 'statementTimeoutMs' | 'memoryBytes'>,
): Promise<void> {
  await client.command({
    query: BUILD,
    query_params: {
      org: organizationId,
      hour: hourMs / 1000,
      // Unique per attempt: milliseconds and a random part.
      build: String(BigInt(Date.now()) * 1_000_000n + BigInt(randomInt(1_000_000))),
    },
    clickhouse_settings: {
      max_execution_time: Math.ceil(limits.statementTimeoutMs / 1000),
      max_memory_usage: String(limits.memoryBytes),
      optimize_aggregation_in_order: 1,
      // On a cluster the build is on its shard when the statement returns, or the statement fails.
      distributed_foreground_insert: 1,
    },
  })
}

/** One round: the stale closed hours in the horizon, newest first, each built. Returns how many. */
export async function buildStaleHours(
  client: ClickHouseClient,
  options: RollupOptions,
  now = Date.now(),
  stopped: () => boolean = () => false,
  log?: Logger,
): Promise<number> {
  const to = Math.floor((now - options.settleMs) / HOUR_MS) * HOUR_MS - HOUR_MS
  const from = Math.max(0, Math.floor((now - options.horizonMs) / HOUR_MS) * HOUR_MS)
  const rs = await client.query({
    query: STALE,
    query_params: {
      from: from / 1000,
      to: (to + HOUR_MS) / 1000,
      max: options.maxHours,
      per_org: options.maxHoursPerOrg,
    },
    format: 'JSONEachRow',
    clickhouse_settings: { max_execution_time: Math.ceil(options.statementTimeoutMs / 1000) },
  })
  const stale = await rs.json<{ org: string; hour: number }>()
  for (const { org, hour } of stale) {
    if (stopped()) break
    try {
      await buildHour(client, org, Number(hour) * 1000, options)
      built.inc()
    } catch (err) {
      // The hour stays stale (read raw) and is tried again next round; the others go on.
      failed.inc()
      log?.warn(
        { err, organizationId: org, hour: new Date(Number(hour) * 1000) },
        'metrics_rollup_build_failed',
      )
    }
  }
  return stale.length
}

/**
 * Builds stale hours every `intervalMs` (the first round one interval after the start; at once
 * again while a round was full) until stopped. A failed round is logged, counted and retried at
 * the next; nothing is lost (the hours stay stale, and queries read them raw meanwhile).
 */
export function startRollupBuilder(
  client: ClickHouseClient,
  log: Logger,
  options: RollupOptions & { intervalMs: number },
): { stop(): Promise<void> } {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  const round = async () => {
    let full = false
    try {
      const n = await buildStaleHours(client, options, Date.now(), () => stopped, log)
      full = n === options.maxHours
      if (n > 0) log.debug({ hours: n }, 'metrics_rollup_built')
    } catch (err) {
      failed.inc()
      log.warn({ err }, 'metrics_rollup_round_failed')
    }
    if (!stopped) schedule(full ? 0 : options.intervalMs)
  }
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      running = round()
    }, ms)
    timer.unref()
  }
  schedule(options.intervalMs)
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
