-- Lists that read more than they return on a long history (plans in bench/results/HISTORY.md):
--
-- A tenant's runs of one campaign or one account: the API always adds the tenant, and the
-- planner answered `tenant_id = … and campaign_id = …` by AND-ing two bitmaps and sorting every
-- run of the campaign (or account) for a page of 50. These give the rows in the list's order.
--
-- A tenant's events after an id (the event stream's Last-Event-ID replay): the id order was
-- walked across every tenant's events, each joined to its run to test the tenant. run_events
-- carries the tenant; this index reads that tenant's events alone, in id order.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Indexes only; no row is changed. They hold a write lock while they
-- build (a few seconds per million rows): migrate before the services start.

create index runs_tenant_campaign_idx on runs (tenant_id, campaign_id, created_at desc, id desc);
create index runs_tenant_account_idx on runs (tenant_id, account_id, created_at desc, id desc);
create index run_events_tenant_idx on run_events (tenant_id, id);
