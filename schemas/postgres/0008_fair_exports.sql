-- Fair exports (docs/exports.md): the exporter takes organizations in turns and holds back an
-- organization that wrote its bytes per hour.

-- When each organization last had an export job started: the next job goes to the organization
-- whose turn is oldest (never started: first), then to its oldest due job.
create table export_turns (
  organization_id uuid primary key references organizations (id) on delete cascade,
  last_started_at timestamptz not null
);

-- Bytes of export files stored, one row per file, kept for an hour: an organization whose files
-- of the last hour add up to its limit starts no export until enough of them are older.
create table export_bytes (
  organization_id uuid not null references organizations (id) on delete cascade,
  written_at timestamptz not null default now(),
  bytes bigint not null check (bytes >= 0)
);

create index export_bytes_organization on export_bytes (organization_id, written_at);
create index export_bytes_written on export_bytes (written_at);

-- Why a queued job is held back until next_attempt_at (the byte limit); null when it is not.
alter table exports add column waiting_reason text;

-- An organization's oldest due job, found per organization.
create index exports_organization_due on exports (organization_id, next_attempt_at) where status = 'queued';
