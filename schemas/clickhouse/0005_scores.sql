-- Scores (grades of a request or a session) and custom properties set after a request was
-- recorded. Both arrive as annotation events through the event topic; neither rewrites a request
-- row. See README.md beside this file and docs/scores.md.
--
-- One row per score id; a later write of the same id (higher version) replaces it, a tombstone
-- (is_deleted = 1) deletes it. Read with FINAL (which also drops the deleted ones).
CREATE TABLE IF NOT EXISTS scores
(
    organization_id UUID,
    id              UUID,
    target_kind     Enum8('request' = 1, 'session' = 2),
    request_id      UUID,
    session_id      String,
    name            String,
    source          LowCardinality(String),
    data_type       Enum8('numeric' = 1, 'boolean' = 2, 'categorical' = 3),
    value           Float64,
    string_value    String,
    comment         String,
    created_at      DateTime64(3, 'UTC'),
    version         UInt64,
    is_deleted      UInt8,
    ingested_at     DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_request_id request_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_name name TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY (organization_id, id);

-- A request's custom properties set after the fact: per request and key, the latest value wins
-- over the request's own `properties` and over earlier updates.
CREATE TABLE IF NOT EXISTS request_property_updates
(
    organization_id UUID,
    request_id      UUID,
    key             String,
    value           String,
    updated_at      DateTime64(3, 'UTC'),
    version         UInt64,
    ingested_at     DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (organization_id, request_id, key);
