/**
 * The tables of scores and of properties set after the fact (schemas/clickhouse/0005_scores.sql):
 * ingest writes them, the SQL views and exports read them beside request_response_rmt.
 */
export const SCORE_TABLE = 'scores'
export const PROPERTY_UPDATE_TABLE = 'request_property_updates'
