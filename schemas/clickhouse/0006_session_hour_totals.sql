-- The sessions rollup: per organization, closed hour and session, the hour's requests of that
-- session aggregated once per request (deduplicated like FINAL). Session pages sorted by cost,
-- request count or latency read it instead of grouping every request of the window. Built by
-- ingest beside the metrics rollup (request_hours), with the same protocol: one build per hour,
-- whose row with is_total = 1 records the rows it read (covered_rows), the insert count just
-- before (inserts_seen) and the count it answers for (accepted_rows). An hour is read from here
-- only while its newest build's accepted_rows equals request_hour_inserts' count; otherwise from
-- the requests. See README.md.
CREATE TABLE IF NOT EXISTS session_hour_totals
(
    organization_id   UUID,
    hour              DateTime('UTC'),
    build             UInt64,
    is_total          UInt8,
    covered_rows      UInt64,
    inserts_seen      UInt64,
    accepted_rows     UInt64,
    session_id        String,
    first_request_at  DateTime64(3, 'UTC'),
    last_request_at   DateTime64(3, 'UTC'),
    requests          UInt64,
    cost              Float64,
    prompt_tokens     UInt64,
    completion_tokens UInt64,
    latency_sum       UInt64,
    user_ids          Array(String),
    latest_name       String,
    latest_name_at    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(build)
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, hour, is_total, session_id)
-- Small granules: a page's 50 sessions are spread over the window, and the second pass reads only
-- the granules that hold them.
SETTINGS index_granularity = 1024;
