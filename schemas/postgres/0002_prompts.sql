-- Prompts, their immutable versions and the environments those versions are deployed to.
-- Version bodies live in object storage (storage_key); a version row is inserted only after
-- its body has been stored.
create table prompts (
  id uuid primary key,
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  tags text[] not null default '{}',
  created_at timestamptz not null default now(),
  -- the target of prompt_versions' composite key, so a version cannot point across organizations
  unique (id, organization_id)
);

-- Names are unique per organization regardless of case ("Support" and "support" are one name).
create unique index prompts_organization_name on prompts (organization_id, lower(name));
create index prompts_organization_created on prompts (organization_id, created_at desc, id desc);
create index prompts_tags on prompts using gin (tags);

create table prompt_versions (
  id uuid primary key,
  prompt_id uuid not null,
  organization_id uuid not null,
  major_version integer not null check (major_version >= 1),
  minor_version integer not null check (minor_version >= 0),
  model text not null check (length(model) between 1 and 200),
  commit_message text not null,
  storage_key text not null unique,
  -- clock time taken with the prompt row locked, so newer versions always sort later
  created_at timestamptz not null default clock_timestamp(),
  foreign key (prompt_id, organization_id) references prompts (id, organization_id) on delete cascade,
  unique (prompt_id, major_version, minor_version),
  -- the target of prompt_environments' composite key: an environment's version is its prompt's
  unique (id, prompt_id)
);

-- One row per (prompt, environment): an environment is held by at most one version of a prompt.
-- A version may hold several. Rows go with their version; refusing to delete the production
-- version is the API's rule, checked with the prompt row locked.
create table prompt_environments (
  prompt_id uuid not null,
  environment text not null check (environment ~ '^[a-z0-9_-]{1,64}$'),
  version_id uuid not null,
  assigned_at timestamptz not null default now(),
  primary key (prompt_id, environment),
  foreign key (version_id, prompt_id) references prompt_versions (id, prompt_id) on delete cascade
);

create index prompt_environments_version on prompt_environments (version_id);
