-- Run lists filtered by a finished status, across tenants (the admin's Activity page,
-- `GET /v1/runs?status=failed`) or within one: runs_newest_idx (0026) gives every run newest
-- first, but a rare status then skips most of the history on the way, and runs_open_idx covers
-- open statuses only. Each gets an index that gives its rows in the list's order, so a page
-- reads its 50 rows however long the history is.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Indexes only; no row is changed. On a large existing `runs` table
-- these hold a write lock while they build (seconds per million runs): migrate before the
-- services start, as `npm start` and the deployment notes do.

create index runs_status_created_idx on runs (status, created_at desc, id desc);
create index runs_tenant_status_idx on runs (tenant_id, status, created_at desc, id desc);

-- A run's events by run: the retention sweep deletes a finished run's events, and deleting a
-- run cascades to them; without it each of those read every event of the history.
create index run_events_run_idx on run_events (run_id);
