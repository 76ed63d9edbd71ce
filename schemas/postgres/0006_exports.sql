-- Exports of an organization's requests to the object store (docs/exports.md), and the schedules
-- that create them. Retries are rows: a job is due when status = 'queued' and
-- next_attempt_at <= now(); a worker claims it (status 'running', a fresh lease_token, a lease
-- that it renews while it works) and writes its outcome only while that token is still the
-- row's. A running job whose lease expired (its process died) is due again.
create table export_schedules (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  period text not null check (period in ('hourly', 'daily')),
  format text not null check (format in ('parquet', 'csv', 'jsonl')),
  filter jsonb not null,
  -- the start of the first window not yet given a job: windows follow each other without gaps
  next_window_start timestamptz not null,
  created_at timestamptz not null default now()
);

create index export_schedules_organization on export_schedules (organization_id, created_at, id);
create index export_schedules_due on export_schedules (next_window_start);

create table exports (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  schedule_id uuid references export_schedules (id) on delete set null,
  window_from timestamptz not null,
  window_to timestamptz not null,
  filter jsonb not null,
  format text not null check (format in ('parquet', 'csv', 'jsonl')),
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  lease_token uuid,
  lease_expires_at timestamptz,
  last_error text,
  -- the manifest written beside the files (docs/exports.md), once succeeded
  manifest jsonb,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  check (window_from < window_to),
  check ((status = 'running') = (lease_token is not null))
);

create index exports_organization on exports (organization_id, created_at desc, id);
create index exports_due on exports (next_attempt_at) where status = 'queued';
create index exports_leased on exports (lease_expires_at) where status = 'running';
-- a schedule gives each of its windows one job, even when two processes catch up at once
create unique index exports_schedule_window on exports (schedule_id, window_from) where schedule_id is not null;
