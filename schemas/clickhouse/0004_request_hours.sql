-- How many rows were written per organization and hour, every copy counted (a redelivered
-- request twice). The metrics rollup below is used for an hour only while its build saw exactly
-- this many rows, so a row written after the build sends that hour back to the raw rows.
CREATE TABLE IF NOT EXISTS request_hour_inserts
(
    organization_id UUID,
    hour            DateTime('UTC'),
    rows            SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, hour);

CREATE MATERIALIZED VIEW IF NOT EXISTS request_hour_inserts_mv TO request_hour_inserts AS
SELECT organization_id, toStartOfHour(request_created_at) AS hour, count() AS rows
FROM request_response_rmt
GROUP BY organization_id, hour;

-- Rows written before the view existed. Rows written meanwhile are counted twice: their hours
-- never match a build and are answered from the raw rows, which is slower, never wrong.
INSERT INTO request_hour_inserts
SELECT organization_id, toStartOfHour(request_created_at) AS hour, count() AS rows
FROM request_response_rmt
GROUP BY organization_id, hour;

-- The metrics rollup (POST /v1/metrics/query): per organization, hour and (provider, model,
-- status, prompt_id, prompt_version), the hour's requests aggregated once per request
-- (deduplicated like FINAL); `latencies` holds every latency, so percentiles stay exact
-- (quantileExactArray). Written by ingest for closed hours, one build per hour: the row with
-- is_total = 1 records how many rows the build read (covered_rows), how many the insert count
-- said just before (inserts_seen), and the count it answers for (accepted_rows: inserts_seen when
-- it read them all, or when an earlier build confirms that the missing ones are copies merges
-- removed; else 0); the other rows of the build carry its number. See README.md.
CREATE TABLE IF NOT EXISTS request_hours
(
    organization_id   UUID,
    hour              DateTime('UTC'),
    build             UInt64,
    is_total          UInt8,
    covered_rows      UInt64,
    inserts_seen      UInt64,
    accepted_rows     UInt64,
    provider          LowCardinality(String),
    model             LowCardinality(String),
    status            Int32,
    prompt_id         String,
    prompt_version    String,
    requests          UInt64,
    cost              Float64,
    prompt_tokens     UInt64,
    completion_tokens UInt64,
    total_tokens      UInt64,
    latency_sum       UInt64,
    latencies         Array(UInt32),
    errors            UInt64,
    users             AggregateFunction(uniqExact, String),
    sessions          AggregateFunction(uniqExact, String)
)
ENGINE = ReplacingMergeTree(build)
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, hour, is_total, provider, model, status, prompt_id, prompt_version);
