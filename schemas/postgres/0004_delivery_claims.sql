-- Only a pending delivery carries a claim token: every change away from 'pending' clears it. The
-- dispatcher relies on this to find claimed rows by primary key and token alone. Added NOT VALID
-- (a brief lock, no scan) and validated by the next migration without blocking writes.
alter table webhook_deliveries
  add constraint webhook_deliveries_claim_only_pending check (claim_token is null or status = 'pending') not valid;
