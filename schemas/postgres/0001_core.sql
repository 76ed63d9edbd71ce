-- Organizations and their API keys. Keys are stored only as SHA-256 hashes of the secret.
create table organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_at timestamptz not null default now()
);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  name text not null,
  -- sha256 of the whole secret; secrets carry 256 random bits, so a fast hash is enough
  key_hash bytea not null unique,
  -- the first characters of the secret, shown in lists so people can tell keys apart
  key_prefix text not null,
  role text not null check (role in ('admin', 'member')),
  created_at timestamptz not null default now()
);

create index api_keys_organization on api_keys (organization_id, created_at);
