-- Every processed model request, one row per request. See README.md beside this file.
CREATE TABLE IF NOT EXISTS request_response_rmt
(
    organization_id     UUID,
    request_id          UUID,
    request_created_at  DateTime64(3, 'UTC'),
    response_created_at DateTime64(3, 'UTC'),
    latency             UInt32,
    time_to_first_token Nullable(UInt32),
    provider            LowCardinality(String),
    model               LowCardinality(String),
    status              Int32,
    target_url          String,
    prompt_tokens       UInt32,
    completion_tokens   UInt32,
    total_tokens        UInt32,
    cost                Float64,
    cached              Bool,
    user_id             String,
    session_id          String,
    session_name        String,
    session_path        String,
    properties          Map(LowCardinality(String), String),
    prompt_id           String,
    prompt_version      String,
    request_body        String CODEC(ZSTD(3)),
    response_body       String CODEC(ZSTD(3)),
    ingested_at         DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_user_id user_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request_id request_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(request_created_at)
ORDER BY (organization_id, request_created_at, request_id);
