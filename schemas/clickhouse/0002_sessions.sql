-- Per organization, hour and session: the first and last request time. Session pages sorted by
-- time read this (about one row per session) instead of grouping every request. min and max give
-- the same answer however often a request is written, so re-ingested duplicates cannot skew it.
CREATE TABLE IF NOT EXISTS session_hours
(
    organization_id  UUID,
    hour             DateTime('UTC'),
    session_id       String,
    first_request_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_request_at  SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (organization_id, hour, session_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS session_hours_mv TO session_hours AS
SELECT
    organization_id,
    toStartOfHour(request_created_at) AS hour,
    session_id,
    min(request_created_at) AS first_request_at,
    max(request_created_at) AS last_request_at
FROM request_response_rmt
WHERE session_id != ''
GROUP BY organization_id, hour, session_id;

-- Rows written before the view existed. Rows written meanwhile land twice, which min and max absorb.
INSERT INTO session_hours
SELECT
    organization_id,
    toStartOfHour(request_created_at) AS hour,
    session_id,
    min(request_created_at) AS first_request_at,
    max(request_created_at) AS last_request_at
FROM request_response_rmt
WHERE session_id != ''
GROUP BY organization_id, hour, session_id;
