-- Webhooks, their deliveries (one per webhook and request, with the exact body bytes sent) and
-- every attempt. Retries are rows: a delivery is due when status = 'pending' and
-- next_attempt_at <= now(); a dispatcher claims it by pushing next_attempt_at one lease ahead and
-- writing a fresh claim_token, and records an outcome only while that token is still the row's.
create table webhooks (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  destination text not null,
  sample_rate double precision not null default 100 check (sample_rate >= 0 and sample_rate <= 100),
  -- [{"key": "...", "value": "..."}]: every pair must equal the event's property
  property_filters jsonb not null default '[]',
  include_data boolean not null default true,
  -- the signing key, and the one it replaced while that keeps signing alongside (24 h after rotation)
  hmac_key text not null,
  previous_hmac_key text,
  previous_key_expires_at timestamptz,
  state text not null default 'active' check (state in ('active', 'disabled')),
  disabled_reason text,
  created_at timestamptz not null default now()
);

create index webhooks_organization on webhooks (organization_id, created_at);

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  webhook_id uuid not null references webhooks (id) on delete cascade,
  -- the request the event is about; a random id for test events
  request_id uuid not null,
  event text not null,
  body bytea not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  -- attempts since the schedule last started (a manual retry starts it again)
  round_attempts integer not null default 0,
  next_attempt_at timestamptz,
  -- the claim in force (a uuid per claim); an outcome under an older claim is not written
  claim_token uuid,
  last_attempt_at timestamptz,
  last_response_status integer,
  last_response_body text,
  last_error text,
  last_duration_ms integer,
  created_at timestamptz not null default now(),
  delivered_at timestamptz,
  unique (webhook_id, request_id)
);

create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_log on webhook_deliveries (webhook_id, created_at desc, id);

create table webhook_delivery_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempted_at timestamptz not null,
  duration_ms integer not null,
  response_status integer,
  response_body text,
  error text
);

create index webhook_delivery_attempts_delivery on webhook_delivery_attempts (delivery_id, id);
