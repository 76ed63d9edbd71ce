// The ceilings of bench:sessions: for each case, SQL written by hand (no compiler, no HTTP, no
// validation) that returns the same page. Windows are whole hours here, so the rollup needs no
// edges. Parameters: org, start, end (Unix ms), offset, limit, rows.

const WINDOW = `organization_id = {org:UUID}
  AND request_created_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
  AND request_created_at < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
  AND session_id != ''`

const HOURS = `organization_id = {org:UUID}
  AND hour >= fromUnixTimestamp64Milli({start:Int64}, 'UTC') AND hour < fromUnixTimestamp64Milli({end:Int64}, 'UTC')`

const NEWEST_TOTALS = `${HOURS} AND is_total = 0 AND (hour, build) IN (
    SELECT hour, max(build) FROM session_hour_totals WHERE ${HOURS} AND is_total = 1 GROUP BY hour)`

const ALL = `session_id, min(request_created_at) AS first_at, max(request_created_at) AS last_at, sum(cost) AS cost,
  count() AS requests, sum(prompt_tokens) AS pt, sum(completion_tokens) AS ct, avg(latency) AS lat,
  groupUniqArrayIf(user_id, user_id != '') AS users, argMaxIf(session_name, request_created_at, session_name != '') AS name`

/** First the page's ids by one aggregate, then every aggregate for those ids. */
function twoPass(where: string, key: string, order: string): string {
  return `
WITH page AS (
  SELECT session_id, ${key} AS k FROM request_response_rmt WHERE ${WINDOW} AND ${where}
  GROUP BY session_id ORDER BY k ${order}, session_id LIMIT {limit:UInt32} OFFSET {offset:UInt32})
SELECT ${ALL} FROM request_response_rmt
WHERE ${WINDOW} AND ${where} AND session_id IN (SELECT session_id FROM page)
GROUP BY session_id ORDER BY ${key === 'sum(cost)' ? 'cost' : 'first_at'} ${order}, session_id`
}

export const CEILINGS = {
  // Newest first from the rollup: group only the sessions the latest {rows} hour rows name, over
  // all their rows, keeping those not seen before them (bench windows are whole hours; the page is
  // full, which the bench checks).
  timePage: `
WITH (SELECT min(hour) FROM (SELECT hour FROM session_hours WHERE ${HOURS} ORDER BY hour DESC LIMIT {rows:UInt32})) AS cut,
page AS (
  SELECT session_id, min(first_request_at) AS k FROM session_hours
  WHERE ${HOURS} AND session_id IN (SELECT session_id FROM session_hours WHERE ${HOURS} AND hour >= cut)
  GROUP BY session_id HAVING min(hour) >= cut
  ORDER BY k DESC, session_id LIMIT {limit:UInt32} OFFSET {offset:UInt32})
SELECT ${ALL} FROM request_response_rmt
WHERE ${WINDOW} AND session_id IN (SELECT session_id FROM page)
GROUP BY session_id ORDER BY first_at DESC, session_id`,
  modelPropertyPage: twoPass(
    "model = 'gpt-4o' AND properties['env'] = 'prod'",
    'min(request_created_at)',
    'DESC',
  ),
  searchPage: twoPass(
    "(positionCaseInsensitiveUTF8(session_id, 'review #12') > 0 OR positionCaseInsensitiveUTF8(session_name, 'review #12') > 0)",
    'min(request_created_at)',
    'DESC',
  ),
  namePage: twoPass("session_name = 'Onboarding #2'", 'min(request_created_at)', 'DESC'),
  // The sessions rollup's rows of each hour's newest build added up (every bench hour is built
  // and fresh, so no check against the insert counts), then the page's aggregates from them.
  costPage: `
WITH page AS (
  SELECT session_id, sum(cost) AS k FROM session_hour_totals WHERE ${NEWEST_TOTALS}
  GROUP BY session_id ORDER BY k DESC, session_id LIMIT {limit:UInt32} OFFSET {offset:UInt32})
SELECT session_id, min(first_request_at) AS first_at, max(last_request_at) AS last_at, sum(cost) AS usd,
  sum(requests) AS n, sum(prompt_tokens) AS pt, sum(completion_tokens) AS ct,
  sum(latency_sum) / n AS lat, groupUniqArrayArray(user_ids) AS users,
  argMaxIf(latest_name, latest_name_at, latest_name != '') AS name
FROM session_hour_totals
WHERE ${NEWEST_TOTALS} AND session_id IN (SELECT session_id FROM page)
GROUP BY session_id ORDER BY usd DESC, session_id`,
  // The same page from the requests, for scale (no rollup, no FINAL).
  costPageRaw: twoPass('true', 'sum(cost)', 'DESC'),
  count: `
SELECT uniqExact(session_id) AS count FROM session_hours WHERE ${HOURS}`,
  naive: `
SELECT ${ALL} FROM request_response_rmt FINAL WHERE ${WINDOW}
GROUP BY session_id ORDER BY first_at DESC, session_id LIMIT 50`,
} as const
