-- The run lists that read history without a tenant, campaign or account to narrow them: the
-- admin's Activity page and `GET /v1/runs` newest first across tenants, and a status filter on
-- finished statuses (runs_open_idx covers open ones only). Each gets an index that gives its
-- rows in the list's order, so a page reads its 50 rows however long the history is.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Indexes only; no row is changed. On a large existing `runs` table
-- this holds a write lock while it builds (seconds per million runs): migrate before the
-- services start, as `npm start` and the deployment notes do.

create index runs_created_idx on runs (created_at desc, id desc);
create index runs_status_created_idx on runs (status, created_at desc, id desc);
create index runs_tenant_status_idx on runs (tenant_id, status, created_at desc, id desc);
