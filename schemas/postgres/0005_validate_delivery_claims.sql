-- Checks the rows that were there before 0004 while writes go on (SHARE UPDATE EXCLUSIVE).
alter table webhook_deliveries validate constraint webhook_deliveries_claim_only_pending;
