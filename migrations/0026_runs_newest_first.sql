-- Lists of runs without a tenant, campaign or account filter (the operator's Activity page,
-- GET /v1/runs?status=…, and their "load more" pages) are read newest first: without an index
-- in that order every run was read and sorted (runs_tenant_idx leads with the tenant,
-- runs_open_idx covers open statuses only). With this one a page reads its rows in order,
-- a status filter skipping the others on the way.
create index runs_newest_idx on runs (created_at desc, id desc);
