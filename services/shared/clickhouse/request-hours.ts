import { randomInt } from 'node:crypto'
import type { Logger } from '../logger.ts'
import { counter } from '../metrics.ts'
import type { ClickHouseClient } from './client.ts'
import { REQUEST_TABLE } from './request-table.ts'

/**
 * The rollups of closed hours, per organization and hour, the hour's requests aggregated once per
 * request: the metrics rollup (schemas/clickhouse/0004_request_hours.sql) by the columns below,
 * and the sessions rollup (0006_session_hour_totals.sql) by session. An hour of a rollup is used
 * only while its newest build's `accepted_rows` equals the rows request_hour_inserts says were
 * written (every copy counted); otherwise the query reads that hour's raw rows. So a rollup is
 * never wrong, only sometimes not used.
 *
 * A build accepts the count it read before reading the raw rows when it read exactly that many
 * rows. When it read fewer (a merge removed a redelivered copy, or a counted row was not visible
 * yet), it accepts the count only if the hour's previous build, at least CONFIRM_AFTER_MS
 * earlier, saw the same count and read the same rows: by then a counted row would have been
 * visible, so the difference is copies merges removed.
 */
export const ROLLUP_TABLE = 'request_hours'
export const INSERTS_TABLE = 'request_hour_inserts'
export const SESSION_ROLLUP_TABLE = 'session_hour_totals'

/** The columns a rollup row is grouped by: what a metrics dimension or filter may use on it. */
export const ROLLUP_COLUMNS = ['provider', 'model', 'status', 'prompt_id', 'prompt_version'] as const

const HOUR_MS = 3_600_000
/** How long after a build a second one may confirm a count it read fewer rows than. */
const CONFIRM_AFTER_MS = 10_000

const built = counter(
  'tally_metrics_rollup_builds_total',
  'Hours of the metrics and sessions rollups built by ingest, one build of each per hour',
)
const failed = counter(
  'tally_metrics_rollup_build_failures_total',
  'Builds of an hour, or rounds, of the metrics and sessions rollups that failed (tried again next round)',
)

/** A rollup of closed hours: one table, built per organization and hour by the same protocol. */
interface Rollup {
  table: string
  /** The columns of the rows that are not the hour's total (the total row leaves them empty). */
  groupBy: readonly string[]
  /** Each request's columns as its newest copy has them, under these names, for the aggregates. */
  columns: readonly string[]
  /** The rows' aggregates over those requests (and their request_created_at). */
  aggregates: string
  /** Which grouped rows are kept besides the total row. */
  keep?: string
}

/**
 * The metrics rollup's measures columns, each as one hour's requests (of one set of dimensions)
 * give it: the build aggregates a request's newest copies this way, and a metrics read the
 * requests of the hours it cannot take from the rollup (FINAL), so the two always agree.
 */
export const METRIC_TOTALS: Readonly<Record<string, string>> = {
  requests: 'count()',
  cost: 'sum(cost)',
  prompt_tokens: 'sum(prompt_tokens)',
  completion_tokens: 'sum(completion_tokens)',
  total_tokens: 'sum(total_tokens)',
  latency_sum: 'sum(latency)',
  latencies: 'groupArray(latency)',
  errors: 'countIf(status < 200 OR status >= 400)',
  users: "uniqExactStateIf(user_id, user_id != '')",
  sessions: "uniqExactStateIf(session_id, session_id != '')",
}

/** A record of columns and their aggregates as a SELECT list. */
const selectList = (totals: Readonly<Record<string, string>>) =>
  Object.entries(totals)
    .map(([column, sql]) => `${sql} AS ${column}`)
    .join(',\n  ')

const METRICS: Rollup = {
  table: ROLLUP_TABLE,
  groupBy: ROLLUP_COLUMNS,
  columns: [
    ...ROLLUP_COLUMNS,
    'cost',
    'prompt_tokens',
    'completion_tokens',
    'total_tokens',
    'latency',
    'user_id',
    'session_id',
  ],
  aggregates: selectList(METRIC_TOTALS),
}

/**
 * The sessions rollup's columns, each as one session's requests give it: the build aggregates a
 * request's newest copies this way, and a read the requests of the hours it cannot take from the
 * rollup (FINAL), so the two always agree.
 */
export const SESSION_TOTALS: Readonly<Record<string, string>> = {
  first_request_at: 'min(request_created_at)',
  last_request_at: 'max(request_created_at)',
  requests: 'count()',
  cost: 'sum(cost)',
  prompt_tokens: 'sum(prompt_tokens)',
  completion_tokens: 'sum(completion_tokens)',
  latency_sum: 'sum(latency)',
  user_ids: "groupUniqArrayIf(user_id, user_id != '')",
  latest_name: "argMaxIf(session_name, request_created_at, session_name != '')",
  latest_name_at: "maxIf(request_created_at, session_name != '')",
}

/**
 * The sessions rollup (schemas/clickhouse/0006_session_hour_totals.sql): per session, what the
 * session list shows, in a form that adds up over hours (services/api/sessions/sql.ts).
 */
const SESSIONS: Rollup = {
  table: SESSION_ROLLUP_TABLE,
  groupBy: ['session_id'],
  columns: ['session_id', 'session_name', 'user_id', 'cost', 'prompt_tokens', 'completion_tokens', 'latency'],
  aggregates: selectList(SESSION_TOTALS),
  keep: "session_id != ''",
}

const ROLLUPS = [METRICS, SESSIONS] as const

/**
 * One hour of one organization's rollup, built in one statement: the count of rows written so far
 * and the previous build's figures are read first (scalar subqueries), then the raw rows once (no
 * FINAL), each request reduced to its newest copy (argMax by ingested_at, as ReplacingMergeTree
 * keeps it), then grouped; the GROUPING SETS' hour-only row is the build's total row. The insert
 * is squashed into one block, so a build lands whole or not at all. Every value is a parameter;
 * `build` is new for every attempt (milliseconds × 10^6 plus a random part), so only one attempt
 * is ever read.
 */
function buildStatement(rollup: Rollup): string {
  const hour = `organization_id = {org:UUID} AND hour = toDateTime({hour:UInt32}, 'UTC')`
  return `
INSERT INTO ${rollup.table}
WITH
  (SELECT sum(rows) FROM ${INSERTS_TABLE} WHERE ${hour}) AS seen_now,
  (SELECT tuple(max(build), argMax(inserts_seen, build), argMax(covered_rows, build)) FROM ${rollup.table}
   WHERE ${hour} AND is_total = 1) AS previous
SELECT
  {org:UUID} AS organization_id,
  toDateTime({hour:UInt32}, 'UTC') AS hour,
  {build:UInt64} AS build,
  grouping(${rollup.groupBy[0]}) AS is_total,
  if(is_total = 1, sum(copies), 0) AS covered_rows,
  if(is_total = 1, seen_now, 0) AS inserts_seen,
  if(is_total = 1,
     if(covered_rows = seen_now
        OR (previous.2 = seen_now AND previous.3 = covered_rows
            AND intDiv({build:UInt64}, 1000000) >= intDiv(previous.1, 1000000) + {confirm_after:UInt64}),
        seen_now, 0),
     0) AS accepted_rows,
  ${rollup.groupBy.join(', ')},
  ${rollup.aggregates}
FROM (
  SELECT copies, request_created_at,
    ${rollup.columns.map((c, i) => `r.${i + 1} AS ${c}`).join(', ')}
  FROM (
    SELECT count() AS copies, request_created_at,
      argMax((${rollup.columns.join(', ')}), ingested_at) AS r
    FROM ${REQUEST_TABLE}
    WHERE organization_id = {org:UUID}
      AND request_created_at >= toDateTime64({hour:UInt32}, 3, 'UTC')
      AND request_created_at < toDateTime64({hour:UInt32} + 3600, 3, 'UTC')
    -- The sorting key's own order: aggregated as read, in bounded memory.
    GROUP BY organization_id, request_created_at, request_id
  )
)
GROUP BY GROUPING SETS ((${rollup.groupBy.join(', ')}), ())${rollup.keep ? `\nHAVING is_total = 1 OR ${rollup.keep}` : ''}`
}

const BUILDS = ROLLUPS.map(buildStatement)

/** Per organization and hour of the listing's range, the newest build of `rollup` and what it answers for. */
const newestBuilds = (rollup: Rollup) => `(
  SELECT organization_id, hour, max(build) AS newest, argMax(accepted_rows, build) AS accepted,
         argMax(inserts_seen, build) AS seen
  FROM ${rollup.table}
  WHERE is_total = 1 AND hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
  GROUP BY organization_id, hour
)`

/** Whether the newest build (`b`) of a rollup fails to answer for the hour's rows, and may be rebuilt now. */
const staleBy = (b: string) => `(i.rows != ${b}.accepted
    AND (i.rows != ${b}.seen OR intDiv(${b}.newest, 1000000) + {confirm_after:UInt64} <= {clock:UInt64}))`

/**
 * Closed hours whose newest build of either rollup is not accepted for the rows written: never
 * built, written to since, or not confirmed yet. An hour whose newest build saw the present count
 * and could not be confirmed waits until CONFIRM_AFTER_MS after it (the next build may confirm it).
 */
const STALE = `
SELECT toString(i.organization_id) AS org, toUInt32(i.hour) AS hour
FROM (
  SELECT organization_id, hour, sum(rows) AS rows FROM ${INSERTS_TABLE}
  WHERE hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
  GROUP BY organization_id, hour
) AS i
${ROLLUPS.map((r, n) => `LEFT JOIN ${newestBuilds(r)} AS b${n} ON i.organization_id = b${n}.organization_id AND i.hour = b${n}.hour`).join('\n')}
WHERE ${ROLLUPS.map((_, n) => staleBy(`b${n}`)).join('\n   OR ')}
ORDER BY i.hour DESC
LIMIT {per_org:UInt32} BY i.organization_id
LIMIT {max:UInt32}
SETTINGS join_use_nulls = 0`

export interface BuildLimits {
  /** Each statement's time limit (ClickHouse's max_execution_time). */
  statementTimeoutMs: number
  /** Each statement's memory limit (ClickHouse's max_memory_usage). */
  memoryBytes: number
  /** How long after a build the next may confirm it (CONFIRM_AFTER_MS unless a test says). */
  confirmAfterMs?: number
}

export interface RollupOptions extends BuildLimits {
  /** Hours older than this are not built (queries read them raw). */
  horizonMs: number
  /** An hour is built once it ended this long ago. */
  settleMs: number
  /** Hours built per round at most. */
  maxHours: number
  /** Hours of one organization built per round at most: one busy organization cannot take a round. */
  maxHoursPerOrg: number
}

/** What a round did: the hours it listed as stale, and those it built. */
export interface RoundResult {
  listed: number
  built: number
}

/**
 * Runs one organization's build, or answers false to skip it: ingest skips deleted organizations
 * and runs the others as its writes, so a deletion waits for them and sweeps again.
 */
export type AdmitBuild = (organizationId: string, build: () => Promise<void>) => Promise<boolean>

const runNow: AdmitBuild = async (_organizationId, build) => {
  await build()
  return true
}

/** Builds one hour of one organization in each rollup, one after the other. */
export async function buildHour(
  client: ClickHouseClient,
  organizationId: string,
  hourMs: number,
  limits: BuildLimits,
): Promise<void> {
  for (const query of BUILDS) await buildOne(client, query, organizationId, hourMs, limits)
}

async function buildOne(
  client: ClickHouseClient,
  query: string,
  organizationId: string,
  hourMs: number,
  limits: BuildLimits,
): Promise<void> {
  await client.command({
    query,
    query_params: {
      org: organizationId,
      hour: hourMs / 1000,
      build: String(BigInt(Date.now()) * 1_000_000n + BigInt(randomInt(1_000_000))),
      confirm_after: limits.confirmAfterMs ?? CONFIRM_AFTER_MS,
    },
    clickhouse_settings: {
      max_execution_time: Math.ceil(limits.statementTimeoutMs / 1000),
      max_memory_usage: String(limits.memoryBytes),
      optimize_aggregation_in_order: 1,
      // One block, so one part: a build is whole or absent.
      min_insert_block_size_rows: '1000000000000',
      min_insert_block_size_bytes: '1000000000000000',
      // On a cluster the build is on its shard when the statement returns, or the statement fails.
      distributed_foreground_insert: 1,
    },
  })
}

/**
 * One round: the stale closed hours in the horizon, newest first, at most `maxHoursPerOrg` per
 * organization, each built unless `skip` says so. A build that fails is logged and counted, and
 * the round goes on. The listing runs under the same limits as a build.
 */
export async function buildStaleHours(
  client: ClickHouseClient,
  options: RollupOptions,
  run: {
    now?: number
    stopped?: () => boolean
    log?: Logger
    admit?: AdmitBuild
    /** Hours not to try this round (they failed lately). */
    skip?: (organizationId: string, hourMs: number) => boolean
    failedBuild?: (organizationId: string, hourMs: number) => void
  } = {},
): Promise<RoundResult> {
  const now = run.now ?? Date.now()
  // Closed hours: those that ended at least settleMs ago, so starting before `to`.
  const to = Math.floor((now - options.settleMs) / HOUR_MS) * HOUR_MS
  const from = Math.max(0, Math.floor((now - options.horizonMs) / HOUR_MS) * HOUR_MS)
  const rs = await client.query({
    query: STALE,
    query_params: {
      from: from / 1000,
      to: to / 1000,
      max: options.maxHours,
      per_org: options.maxHoursPerOrg,
      confirm_after: options.confirmAfterMs ?? CONFIRM_AFTER_MS,
      // The clock builds are stamped with (`now` may be another moment, for the horizon).
      clock: Date.now(),
    },
    format: 'JSONEachRow',
    clickhouse_settings: {
      max_execution_time: Math.ceil(options.statementTimeoutMs / 1000),
      max_memory_usage: String(options.memoryBytes),
    },
  })
  const stale = await rs.json<{ org: string; hour: number }>()
  const admit = run.admit ?? runNow
  let done = 0
  for (const { org, hour } of stale) {
    const hourMs = Number(hour) * 1000
    if (run.stopped?.()) break
    if (run.skip?.(org, hourMs)) continue
    try {
      if (await admit(org, () => buildHour(client, org, hourMs, options))) {
        built.inc()
        done += 1
      }
    } catch (err) {
      // The hour stays stale (read raw) and is tried again later; the others go on.
      failed.inc()
      run.failedBuild?.(org, hourMs)
      run.log?.warn({ err, organizationId: org, hour: new Date(hourMs) }, 'metrics_rollup_build_failed')
    }
  }
  return { listed: stale.length, built: done }
}

/** How long an hour whose build failed is left alone (it is read raw meanwhile). */
const FAILED_BUILD_PAUSE_MS = 10 * 60_000
const MAX_REMEMBERED_FAILURES = 10_000

/**
 * Builds stale hours every `intervalMs` (the first round one interval after the start; at once
 * again while a round built a full share) until stopped. A failed round is logged, counted and
 * retried at the next; an hour whose build failed is left for FAILED_BUILD_PAUSE_MS. Nothing is
 * lost: stale hours are read raw meanwhile.
 */
export function startRollupBuilder(
  client: ClickHouseClient,
  log: Logger,
  options: RollupOptions & { intervalMs: number; admit?: AdmitBuild },
): { stop(): Promise<void> } {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  const pausedUntil = new Map<string, number>()
  const key = (org: string, hourMs: number) => `${org}/${hourMs}`
  const round = async () => {
    let full = false
    try {
      const now = Date.now()
      for (const [k, until] of pausedUntil) if (until <= now) pausedUntil.delete(k)
      const result = await buildStaleHours(client, options, {
        now,
        stopped: () => stopped,
        log,
        ...(options.admit ? { admit: options.admit } : {}),
        skip: (org, hourMs) => (pausedUntil.get(key(org, hourMs)) ?? 0) > now,
        failedBuild: (org, hourMs) => {
          if (pausedUntil.size < MAX_REMEMBERED_FAILURES)
            pausedUntil.set(key(org, hourMs), Date.now() + FAILED_BUILD_PAUSE_MS)
        },
      })
      // Only a round that built its whole share goes on at once: failures wait for the interval.
      full = result.built === options.maxHours
      if (result.built > 0) log.debug(result, 'metrics_rollup_built')
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
