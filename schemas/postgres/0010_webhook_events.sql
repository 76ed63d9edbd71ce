-- Webhook events (docs/webhooks.md): a webhook subscribes to `request.completed` (every webhook
-- so far, and the default), `score.created` and `feedback.created`.
--
-- A constant default: no rewrite of the table. The check reads the small webhooks table once.
alter table webhooks
  add column events text[] not null default '{request.completed}'
  constraint webhooks_events_known check (
    cardinality(events) > 0
    and events <@ '{request.completed,score.created,feedback.created}'::text[]
  );

-- A delivery's identity. A request's delivery stays one per (webhook, request), under the unique
-- (webhook_id, request_id) of 0003, with event_key null. A score's delivery is one per (webhook,
-- score version): event_key `score:<score id>:<version>` and request_id null (a score is not a
-- request, and a request's scores must not collide with its request.completed delivery), so a
-- redelivered score event inserts nothing and a later version of the score is delivered again.
-- Rows before 0010 all keep their request_id and need no rewrite; the partial index holds only
-- score deliveries (its build reads the table once and sorts nothing).
alter table webhook_deliveries add column event_key text;
alter table webhook_deliveries alter column request_id drop not null;
create unique index webhook_deliveries_event_key on webhook_deliveries (webhook_id, event_key)
  where event_key is not null;

-- Exactly one of the two says what a delivery is about. Every row before 0010 has a request_id
-- and no event_key; NOT VALID spares the scan under this migration's lock, new rows are checked.
alter table webhook_deliveries
  add constraint webhook_deliveries_identity check ((request_id is null) <> (event_key is null)) not valid;
