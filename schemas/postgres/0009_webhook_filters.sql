-- A webhook's filter tree (docs/webhooks.md): the filter language of request queries, decided
-- by the dispatcher on each event together with property_filters. NULL: no tree.
alter table webhooks add column filter_tree jsonb;
