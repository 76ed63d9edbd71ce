import type { ClickHouseClient } from '../services/shared/clickhouse/client.ts'
import { buildStaleHours } from '../services/shared/clickhouse/request-hours.ts'

/**
 * Deterministic session traffic generated inside ClickHouse (INSERT … SELECT FROM numbers()), so
 * ten million rows take a minute rather than an hour of client inserts. Used by bench:sessions and,
 * at 100k rows, by the fast-vs-reference test.
 *
 * Request n belongs to session floor(n / perSession); sessions alternate between the organizations.
 * A session starts at a hashed instant of the window and its requests follow 1-60 s apart. Costs are
 * multiples of 1/1024 USD so sums are exact in any order.
 */
export interface GeneratedSessions {
  organizations: string[]
  requests: number
  perSession: number
  /** First instant of the generated window, Unix ms. */
  startMs: number
  days: number
  /** First request number, so several generations can share a table. */
  first?: number
}

export const SESSION_NAMES = [
  'Support chat',
  'Agent run',
  'Onboarding',
  'Code review',
  'Search',
  'Triage',
  'Summaries',
  'Ops',
]
export const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4', 'claude-haiku-4', 'gemini-2.5-pro']

/** The session name of session number s, as the SQL below writes it. */
export const sessionName = (s: number) => `${SESSION_NAMES[s % 8]} #${s % 5000}`
export const sessionId = (s: number) => `sess-${s}`

export async function generateSessions(client: ClickHouseClient, g: GeneratedSessions): Promise<void> {
  const query = `
INSERT INTO request_response_rmt
  (organization_id, request_id, request_created_at, response_created_at, latency, time_to_first_token,
   provider, model, status, target_url, prompt_tokens, completion_tokens, total_tokens, cost, cached,
   user_id, session_id, session_name, session_path, properties, prompt_id, prompt_version,
   request_body, response_body)
SELECT
  {orgs:Array(UUID)}[s % length({orgs:Array(UUID)}) + 1] AS organization_id,
  toUUID(UUIDNumToString(toFixedString(concat(reinterpretAsString(cityHash64(n, 1)), reinterpretAsString(cityHash64(n, 2))), 16))) AS request_id,
  fromUnixTimestamp64Milli(toInt64({start:Int64} + cityHash64(s) % ({days:UInt32} * 86400000) + (n % {per:UInt32}) * (1000 + cityHash64(n) % 59000)), 'UTC') AS created,
  created + toIntervalMillisecond(latency) AS response_created_at,
  toUInt32(100 + cityHash64(n, 3) % 4000) AS latency,
  if(n % 5 = 0, NULL, toUInt32(latency / 4)) AS time_to_first_token,
  if(model LIKE 'gpt%', 'openai', if(model LIKE 'claude%', 'anthropic', 'google')) AS provider,
  {models:Array(String)}[cityHash64(n, 4) % length({models:Array(String)}) + 1] AS model,
  if(n % 50 = 0, 500, 200) AS status,
  'https://api.example.com/v1/chat/completions' AS target_url,
  toUInt32(cityHash64(n, 5) % 2000) AS prompt_tokens,
  toUInt32(cityHash64(n, 6) % 800) AS completion_tokens,
  prompt_tokens + completion_tokens AS total_tokens,
  (cityHash64(n, 7) % 1000) / 1024 AS cost,
  n % 7 = 0 AS cached,
  if(n % 11 = 0, '', concat('user-', toString(cityHash64(s, 8) % 20000 + n % 3))) AS user_id,
  concat('sess-', toString(s)) AS session_id,
  concat({names:Array(String)}[s % 8 + 1], ' #', toString(s % 5000)) AS session_name,
  '/' AS session_path,
  map('env', ['prod', 'dev', 'staging'][s % 3 + 1], 'tier', ['free', 'pro'][n % 2 + 1]) AS properties,
  '' AS prompt_id,
  '' AS prompt_version,
  '{}' AS request_body,
  '{}' AS response_body
FROM (SELECT number + {first:UInt64} AS n, intDiv(n, {per:UInt32}) AS s FROM numbers({count:UInt64}))`
  await client.command({
    query,
    query_params: {
      orgs: g.organizations,
      start: g.startMs,
      days: g.days,
      per: g.perSession,
      models: MODELS,
      names: SESSION_NAMES,
      first: g.first ?? 0,
      count: g.requests,
    },
    clickhouse_settings: { max_insert_threads: '2' },
  })
}

/** bench:sessions' data, which bench:cluster generates too: 10M requests, 2 organizations, 30 days. */
export const BENCH_REQUESTS = 10_000_000
export const BENCH_ORGS = ['5e551015-0000-4000-8000-000000000001', '5e551015-0000-4000-8000-000000000002']
export const BENCH_START = Date.UTC(2026, 9, 2)
const DAY = 86_400_000
export const BENCH_WINDOW = { startTimeUnixMs: BENCH_START, endTimeUnixMs: BENCH_START + 30 * DAY }
const CHUNK = 1_000_000

/**
 * bench:sessions' data in `client`'s database, generated when missing (resuming an interrupted
 * generation) and merged; answers how many of its requests the database holds. On a cluster
 * `nodes` are its nodes: the rows go through the Distributed table, which places each session on
 * its shard, and each node merges its local tables. `requests` asks for the first requests of the
 * data set only (bench:metrics' BENCH_METRICS_REQUESTS): the same rows, so a later run asking for
 * more resumes where it stopped.
 */
export async function ensureBenchSessions(
  client: ClickHouseClient,
  where: string,
  nodes?: ClickHouseClient[],
  requests = BENCH_REQUESTS,
): Promise<number> {
  const stored = async () => {
    const rs = await client.query({
      query: 'SELECT count() AS n FROM request_response_rmt WHERE organization_id IN {orgs:Array(UUID)}',
      query_params: { orgs: BENCH_ORGS },
      format: 'JSONEachRow',
    })
    return Number((await rs.json<{ n: number }>())[0]?.n)
  }
  let have = await stored()
  if (have >= requests) {
    await mergeAll(nodes ?? [client], nodes ? '_local' : '')
    return stored()
  }
  console.log(`generating ${requests.toLocaleString()} requests into ${where} (once; reused by later runs)`)
  const t = Date.now()
  // Chunks on session boundaries (10 requests each) resume where an interrupted run stopped.
  have -= have % 10
  for (let first = have; first < requests; first += CHUNK) {
    const count = Math.min(CHUNK, requests - first)
    await generateSessions(client, {
      organizations: BENCH_ORGS,
      requests: count,
      perSession: 10,
      startMs: BENCH_START,
      days: 30,
      first,
    })
    console.log(`  ${(first + count).toLocaleString()} rows, ${((Date.now() - t) / 1000).toFixed(0)} s`)
  }
  await mergeAll(nodes ?? [client], nodes ? '_local' : '')
  console.log(`  generated and merged in ${((Date.now() - t) / 1000).toFixed(0)} s`)
  return stored()
}

/**
 * The steady state: background merges have caught up (live traffic arrives in time order, so its
 * parts rarely overlap; generated chunks all span the whole month and would). Done again by a run
 * that finds a table in more parts than partitions (an earlier run stopped while merging). On each
 * of `nodes`, the tables named with `suffix` (a cluster's shard-local tables).
 */
async function mergeAll(nodes: ClickHouseClient[], suffix: string) {
  for (const [i, client] of nodes.entries())
    for (const table of ['request_response_rmt', 'session_hours'].map((t) => `${t}${suffix}`)) {
      const rs = await client.query({
        query: `SELECT count() > uniqExact(partition) AS unmerged FROM system.parts
                WHERE active AND database = currentDatabase() AND table = {table:String}`,
        query_params: { table },
        format: 'JSONEachRow',
      })
      if (!(await rs.json<{ unmerged: number }>())[0]?.unmerged) continue
      const t = Date.now()
      await client.command({ query: `OPTIMIZE TABLE ${table} FINAL` })
      console.log(
        `  merged ${table}${nodes.length > 1 ? ` on node ${i + 1}` : ''} in ${((Date.now() - t) / 1000).toFixed(0)} s`,
      )
    }
}

/**
 * The metrics and sessions rollups of every hour, as ingest builds them once the hours are closed
 * (the benches turn ingest's builder off and call this, timed).
 */
export async function ensureRollups(client: ClickHouseClient): Promise<void> {
  const t = Date.now()
  let hours = 0
  // Bounded: an hour that cannot be built (none here) ends the loop after 20 rounds.
  for (let round = 0; round < 20; round += 1) {
    const { built: n } = await buildStaleHours(client, {
      horizonMs: 3660 * DAY,
      settleMs: 0,
      maxHours: 500,
      maxHoursPerOrg: 500,
      statementTimeoutMs: 600_000,
      memoryBytes: 8 * 2 ** 30,
    })
    if (n === 0) break
    hours += n
  }
  if (hours) console.log(`  built the rollups of ${hours} hours in ${((Date.now() - t) / 1000).toFixed(0)} s`)
}
