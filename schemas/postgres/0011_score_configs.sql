-- Score configs (docs/scores.md): what values a score of a name takes in an organization.
-- A score whose name has a config is checked against it; one without is taken as sent.
create table score_configs (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null,
  data_type text not null check (data_type in ('numeric', 'boolean', 'categorical')),
  min_value double precision,
  max_value double precision,
  categories jsonb,
  description text not null default '',
  created_at timestamptz not null default now(),
  unique (organization_id, name)
);
