-- Audiences (docs/CONTRACT.md §3, Audiences) and test sends (Campaigns, "Send a test").
--
-- An audience is a tenant's named, reusable list of chats, each with optional variables. A
-- campaign names audiences (campaigns.audience_ids) beside its inline targets; every run copies
-- the chats of both when it is created (run-creation.ts), so editing an audience never changes
-- a run already created. audience_ids is an array, not a join table: the run-creation statement
-- reads it with the campaign row it already reads, and a campaign names only a few audiences.
-- The API keeps it to the campaign's tenant's audiences and refuses to delete one a live
-- campaign names (the GIN index answers that).
--
-- A test send is a run with trigger 'test': one chat, sent like any run, listed with the
-- campaign's runs, but never a send of the campaign. So test runs are left out of the per-chat
-- interval gate, of the one-open-run rule and of the one-run-per-occurrence rule.
--
-- Safe when two services migrate at once (one transaction, advisory lock). The new column has
-- a constant default (no rewrite); the two indexes on runs are rebuilt inside the transaction,
-- so writes to runs wait while they build.

create table audiences (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id),
  name text not null,
  -- kept by the statements that add and remove members (one round trip each), so listing
  -- audiences never counts their members
  member_count integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- a name names one audience of a tenant: the console picks audiences by name
create unique index audiences_tenant_name_key on audiences (tenant_id, name);
create index audiences_tenant_idx on audiences (tenant_id, created_at desc, id desc);

create table audience_members (
  audience_id uuid not null references audiences(id) on delete cascade,
  chat_id text not null,
  -- {name: value} for the campaign's {{name}} tags, as a campaign target's vars; null when none
  vars jsonb,
  -- the chat id and every value, folded (libs/core foldForSearch) and joined by U+001F (which
  -- no query can hold): a member search is one `like` on one column
  search text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- also the members' chat order, and the run-creation statement's lookup by audience
  primary key (audience_id, chat_id)
);

alter table campaigns add column audience_ids uuid[] not null default '{}';
create index campaigns_audience_ids_idx on campaigns using gin (audience_ids) where deleted_at is null;

-- test runs
alter table runs drop constraint runs_trigger_check;
alter table runs add constraint runs_trigger_check check (trigger in ('schedule', 'manual', 'test'));

-- One open run per campaign (0001), test runs aside: a test neither waits for nor holds back
-- the campaign's runs. Same name: the API maps this index's violation to a 409.
drop index runs_one_open_per_campaign;
create unique index runs_one_open_per_campaign on runs (campaign_id) where status in ('queued', 'running') and trigger <> 'test';

-- One run per occurrence (0001's unique (campaign_id, scheduled_at)), test runs aside: a test
-- is scheduled at the moment it is asked for, which may be an occurrence's.
alter table runs drop constraint runs_campaign_id_scheduled_at_key;
create unique index runs_campaign_scheduled_key on runs (campaign_id, scheduled_at) where trigger <> 'test';

-- As in migrations/0002, but a test run's deliveries do not gate the campaign's runs.
create or replace function interval_gate(campaign uuid, chat text, exclude uuid, ref timestamptz)
returns timestamptz language sql stable as $$
  select coalesce(
    max(case
      when t.status = 'sent' then t.sent_at
      when t.status = 'in_flight' then t.lease_expires_at
      when t.status = 'unknown' or t.parts_sent > 0 then t.updated_at
    end) + min(c.every),
    'epoch'::timestamptz)
  from (
    select id, make_interval(secs => (schedule->>'everySeconds')::int) as every
    from campaigns where id = interval_gate.campaign and schedule->>'type' = 'interval'
  ) c
  join runs r on r.campaign_id = c.id and r.id <> interval_gate.exclude and r.trigger <> 'test'
    and coalesce(r.finished_at, 'infinity'::timestamptz) > interval_gate.ref - c.every - interval '15 minutes'
  join run_targets t on t.run_id = r.id and t.chat_id = interval_gate.chat
$$;
