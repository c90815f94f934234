-- Runs of one account, newest first (GET /v1/runs?accountId=): the operator console lists an
-- account's activity. Without this index the filter would read every run of the tenant (or,
-- for the admin, of every tenant) to find one account's; with it a page is an index range in
-- the list's own order, like runs_tenant_idx and runs_campaign_idx.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Built in that transaction (CONCURRENTLY cannot run in one), so run
-- writes wait while it builds: a few seconds per million runs.
create index runs_account_idx on runs (account_id, created_at desc, id desc);
