-- Signed webhooks (CONTRACT "Webhooks"), delivered from an outbox in PostgreSQL.
--
-- A status change and the deliveries it owes are written in ONE transaction, by triggers on
-- runs and accounts: every code path that changes a status (scheduler, senders, API, a
-- migration) owes its deliveries, and none is owed for a change that rolled back. A process that
-- crashes, or a Redis that is away, loses nothing: the rows wait here until someone delivers them.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Only new tables and triggers: no existing row is rewritten.

create table webhooks (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id),
  url text not null,
  -- a non-empty subset of {run.status, account.status}
  events text[] not null check (cardinality(events) > 0 and events <@ array['run.status', 'account.status']),
  -- `whsec_…` sealed with SECRETS_KEY (libs/core secrets); shown once, at create
  secret bytea not null,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhooks_tenant_idx on webhooks (tenant_id, created_at desc, id desc);

-- The outbox: one row per (webhook, event). Its id is the `webhook-id` header, the same on
-- every attempt, so a receiver can drop a second copy.
create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  -- order of the outbox; events of one subject go out in this order
  seq bigserial not null unique,
  webhook_id uuid not null references webhooks(id) on delete cascade,
  tenant_id uuid not null,
  type text not null check (type in ('run.status', 'account.status')),
  -- the run or account the event is about: a later event of it waits for an earlier one
  subject_id uuid not null,
  -- the body sent: {type, timestamp, data}
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  -- retries stop (status failed) 24 h after this: the first attempt, or the first after a
  -- redelivery; null until then. Set by the deliverer from its clock, not the database's.
  retry_from timestamptz,
  -- a deliverer holds a row while it posts it; an expired lease is anyone's again (crash)
  lease_owner text,
  lease_until timestamptz,
  last_attempt_at timestamptz,
  last_http_status integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz not null default now()
);
-- the deliverer's claim: due pending rows, oldest first
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at, seq) where status = 'pending';
-- "is an earlier event of this subject still pending?"
create index webhook_deliveries_chain_idx on webhook_deliveries (webhook_id, subject_id, seq) where status = 'pending';
-- GET /v1/webhooks/{id}/deliveries, newest first
create index webhook_deliveries_list_idx on webhook_deliveries (webhook_id, seq desc);

create function webhook_run_status() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    insert into webhook_deliveries (webhook_id, tenant_id, type, subject_id, payload)
    select w.id, new.tenant_id, 'run.status', new.id,
           jsonb_build_object(
             'type', 'run.status',
             'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', jsonb_build_object(
               'runId', new.id, 'campaignId', new.campaign_id, 'accountId', new.account_id,
               'status', new.status,
               'previousStatus', case when tg_op = 'INSERT' then null else old.status end,
               'trigger', new.trigger, 'scheduledAt', to_char(new.scheduled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'pausedReason', new.paused_reason, 'errorSummary', new.error_summary))
      from webhooks w
     where w.tenant_id = new.tenant_id and w.active and 'run.status' = any(w.events);
  end if;
  return new;
end $$;

create trigger webhook_run_status after insert or update of status on runs
  for each row execute function webhook_run_status();

create function webhook_account_status() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    insert into webhook_deliveries (webhook_id, tenant_id, type, subject_id, payload)
    select w.id, new.tenant_id, 'account.status', new.id,
           jsonb_build_object(
             'type', 'account.status',
             'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', jsonb_build_object(
               'accountId', new.id, 'platform', new.platform,
               'status', new.status,
               'previousStatus', case when tg_op = 'INSERT' then null else old.status end))
      from webhooks w
     where w.tenant_id = new.tenant_id and w.active and 'account.status' = any(w.events);
  end if;
  return new;
end $$;

create trigger webhook_account_status after insert or update of status on accounts
  for each row execute function webhook_account_status();
