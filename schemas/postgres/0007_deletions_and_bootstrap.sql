-- Organizations whose deletion began (docs/admin.md). A row is written in the transaction that
-- revokes the organization's keys and is never removed: ingest and the dispatcher drop the events
-- of these organizations that are still in Kafka, and export workers stop their jobs.
create table deleted_organizations (
  organization_id uuid primary key,
  deleted_at timestamptz not null default now()
);

-- The first start of this database, once: the first organization and its admin key are created
-- only while this table is empty, so deleting every organization does not make a first start.
create table bootstrap (
  singleton boolean primary key default true check (singleton),
  bootstrapped_at timestamptz not null default now()
);

-- A database that already has organizations has had its first start.
insert into bootstrap (bootstrapped_at) select min(created_at) from organizations having count(*) > 0;
