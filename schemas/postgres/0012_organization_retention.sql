-- An organization's own retention: how many days ClickHouse keeps what it records (requests, their
-- hourly derivations, scores and property updates), instead of TALLY_RETENTION_DAYS. Null: the
-- instance's. At most 10,000 days: a TTL is a DateTime, which wraps in 2106 (config.ts). Set
-- through PATCH /admin/v1/organizations/{id}; applied as TTL rules
-- (services/shared/clickhouse/retention.ts, docs/operations.md "Retention").
alter table organizations
  add column retention_days integer
    constraint organizations_retention_days_range check (retention_days between 1 and 10000);
