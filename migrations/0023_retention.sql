-- Retention, deletion and erasure (docs/CONTRACT.md, "Retention and deletion").
--
-- A finished run keeps its summary after its targets and events go: `summary_counts` holds the
-- per-status counts taken just before (the API reads them when no target is left), and
-- `history_purged_at` says the chats are gone. A tenant may keep its history shorter than
-- HISTORY_RETENTION. A deleted account keeps its row (its runs' history refers to it) until
-- retention or a purge removes the last of them; a deleted tenant loses its token at once and
-- the rest of its rows in batches. An erased chat is kept only as a salted hash per tenant.
alter table tenants
  add column history_retention_ms bigint check (history_retention_ms > 0),
  add column deleted_at timestamptz,
  -- 16 random bytes (gen_random_uuid is built in since PostgreSQL 13)
  add column chat_salt bytea not null default decode(replace(gen_random_uuid()::text, '-', ''), 'hex');

alter table accounts add column deleted_at timestamptz;

alter table runs
  add column summary_counts jsonb,
  add column history_purged_at timestamptz;

-- the sweep's two reads: finished runs whose history is due, and summaries due
create index runs_history_due_idx on runs (finished_at) where finished_at is not null and history_purged_at is null;
create index runs_summary_due_idx on runs (finished_at) where history_purged_at is not null;
-- settled deliveries by age
create index webhook_deliveries_settled_idx on webhook_deliveries (created_at) where status in ('delivered', 'failed');

create table erased_chats (
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- sha256(tenants.chat_salt || chat id)
  chat_hash bytea not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, chat_hash)
);
