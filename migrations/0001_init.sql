-- Metronome's first schema. Forward-only: later changes get their own numbered file.
-- PostgreSQL holds the truth; Redis only carries jobs, locks and pace state.

create table tenants (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  -- sha256 of the bearer token (hex); the token itself is shown once and never stored
  token_hash text not null unique,
  created_at timestamptz not null default now()
);

create table accounts (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id),
  platform text not null check (platform in ('http', 'telegram', 'whatsapp')),
  name text not null,
  external_id text,
  -- AES-256-GCM sealed JSON (see libs/core secrets); never returned by the API
  credentials bytea,
  status text not null default 'active' check (status in ('active', 'disabled', 'disconnected', 'pairing')),
  blocked_until timestamptz,
  -- null: the sender's DEFAULT_MAX_SEND_PER_MINUTE / DEFAULT_GROUP_CONCURRENCY apply
  max_send_per_minute integer check (max_send_per_minute between 1 and 60000),
  group_concurrency integer check (group_concurrency between 1 and 50),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (platform <> 'http' or external_id is not null)
);
create index accounts_tenant_idx on accounts (tenant_id, created_at);

create table media (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id),
  content_type text not null,
  size integer not null,
  sha256 text not null,
  filename text,
  -- the bytes live here for now; storage_key is for an object store later
  bytes bytea,
  storage_key text,
  created_at timestamptz not null default now(),
  check (bytes is not null or storage_key is not null)
);
create index media_tenant_idx on media (tenant_id, created_at);

-- A platform's reference to an uploaded media, reused by every chat and every replica.
create table media_uploads (
  account_id uuid not null references accounts(id),
  media_id uuid not null references media(id),
  ref text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (account_id, media_id)
);

create table campaigns (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id),
  account_id uuid not null references accounts(id),
  name text not null,
  timezone text not null,
  -- {"type":"interval","everySeconds":N,"startAt"?} | {"type":"cron","expression"} | {"type":"once","at"}
  schedule jsonb not null,
  window_start text not null default '00:00',
  window_end text not null default '24:00',
  -- [{"type":"text","text"} | {"type":"media","mediaId","caption"?}]
  messages jsonb not null,
  targets text[] not null,
  active boolean not null default true,
  auto_resume boolean not null default false,
  -- the next occurrence not yet turned into a run; null when the schedule has none left
  next_run_at timestamptz,
  paused_reason text,
  no_account_streak integer not null default 0,
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index campaigns_tenant_idx on campaigns (tenant_id, created_at) where deleted_at is null;
-- the scheduler's hot query: due, active campaigns, oldest first
create index campaigns_due_idx on campaigns (next_run_at) where active and deleted_at is null;

create table runs (
  id uuid primary key default gen_random_uuid(),
  campaign_id uuid not null references campaigns(id),
  tenant_id uuid not null references tenants(id),
  account_id uuid not null references accounts(id),
  trigger text not null check (trigger in ('schedule', 'manual')),
  status text not null default 'queued'
    check (status in ('queued', 'running', 'paused', 'success', 'partial', 'failed', 'cancelled')),
  -- snapshot of the campaign's message parts when the run was created
  parts jsonb not null,
  total integer not null,
  scheduled_at timestamptz not null,
  started_at timestamptz,
  first_send_at timestamptz,
  finished_at timestamptz,
  window_end_at timestamptz,
  paused_reason text check (paused_reason in ('window_closed', 'operator', 'account_unavailable')),
  error_summary text,
  -- the BullMQ job currently carrying this run (continuations get a new one)
  job_id text,
  job_seq integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (campaign_id, scheduled_at)
);
create index runs_tenant_idx on runs (tenant_id, created_at desc, id desc);
create index runs_campaign_idx on runs (campaign_id, created_at desc, id desc);
create index runs_open_idx on runs (status, updated_at) where status in ('queued', 'running', 'paused');
-- at most one open run per campaign (DESIGN: no overlap, no pile-up)
create unique index runs_one_open_per_campaign on runs (campaign_id) where status in ('queued', 'running');

create table run_targets (
  run_id uuid not null references runs(id) on delete cascade,
  chat_id text not null,
  status text not null default 'pending'
    check (status in ('pending', 'in_flight', 'sent', 'failed', 'skipped', 'unknown')),
  attempts integer not null default 0,
  -- parts already delivered to this chat in this run (parts go in order, so this is a cursor)
  parts_sent integer not null default 0,
  next_attempt_at timestamptz not null default 'epoch',
  lease_owner text,
  lease_expires_at timestamptz,
  sent_at timestamptz,
  latency_ms integer,
  error_code text,
  error_message text,
  message_ids text[] not null default '{}',
  updated_at timestamptz not null default now(),
  primary key (run_id, chat_id)
);
-- the sender's claim query: due pending targets of one run
create index run_targets_claimable_idx on run_targets (run_id, next_attempt_at) where status = 'pending';
-- the reconciler's lease sweep
create index run_targets_in_flight_idx on run_targets (lease_expires_at) where status = 'in_flight';
-- the per-chat interval gate: a chat's last delivery of a campaign
create index run_targets_sent_idx on run_targets (chat_id, sent_at) where status = 'sent';

-- Every run status change, for /v1/events (Last-Event-ID replays from here) and its NOTIFY.
create table run_events (
  id bigserial primary key,
  run_id uuid not null references runs(id) on delete cascade,
  tenant_id uuid not null,
  status text not null,
  created_at timestamptz not null default now()
);

create function runs_status_event() returns trigger language plpgsql as $$
declare
  event_id bigint;
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    insert into run_events (run_id, tenant_id, status) values (new.id, new.tenant_id, new.status)
      returning id into event_id;
    perform pg_notify('metronome_run_events', json_build_object('id', event_id, 'runId', new.id, 'tenantId', new.tenant_id, 'status', new.status)::text);
  end if;
  return new;
end $$;

create trigger runs_status_event after insert or update of status on runs
  for each row execute function runs_status_event();

-- The scheduler leader's fencing token. A replica that wins the Redis lease bumps it; every
-- run-creating transaction checks it still holds the current value, so an old leader that
-- was paused and revives cannot create runs.
create table scheduler_leader (
  id integer primary key default 1 check (id = 1),
  fence bigint not null default 0,
  holder text,
  acquired_at timestamptz
);
insert into scheduler_leader (id) values (1);
