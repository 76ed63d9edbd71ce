-- OpenTelemetry ids of the span a request was recorded from (POST /v1/traces), so a session's
-- requests can be shown as a tree. '' for requests logged without them.
ALTER TABLE request_response_rmt
    ADD COLUMN IF NOT EXISTS trace_id String DEFAULT '' AFTER response_body,
    ADD COLUMN IF NOT EXISTS span_id String DEFAULT '' AFTER trace_id,
    ADD COLUMN IF NOT EXISTS parent_span_id String DEFAULT '' AFTER span_id;
