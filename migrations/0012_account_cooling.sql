-- Automatic cooling (docs/CONTRACT.md §3, accounts, "Automatic cooling"): an account the
-- platform keeps telling to wait, or whose sends keep failing, is set `cooling` until a time,
-- and its pace lowered, then given back step by step (libs/core cooling.ts decides).
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. New columns are nullable or carry a constant default, so no row is
-- rewritten.
alter table accounts drop constraint accounts_status_check;
alter table accounts add constraint accounts_status_check
  check (status in ('active', 'disabled', 'disconnected', 'pairing', 'cooling'));

alter table accounts
  -- while `cooling`: since when, until when, and why (flood_waits | failures)
  add column cooling_since timestamptz,
  add column cooling_until timestamptz,
  add column cooling_reason text,
  -- the latest cooling, kept after it ends: a repeat within 24 h lasts twice as long
  add column last_cooled_at timestamptz,
  add column last_cooling_ms integer check (last_cooling_ms > 0),
  -- the pace as a share of the configured one, as last written, and when recovery counts from
  -- (the pace in force adds a step per clean interval since; libs/core paceFactorAt)
  add column pace_factor double precision not null default 1 check (pace_factor > 0 and pace_factor <= 1),
  add column pace_since timestamptz,
  -- the account's health, written by the sender once per job and only when it changed: flood
  -- waits of the last hour, and one letter per finished send of the latest N (s sent, f failed)
  add column flood_waits timestamptz[] not null default '{}',
  add column send_outcomes text not null default '';

-- The reconciler ends coolings that are due: only cooling accounts are in this index.
create index accounts_cooling_until_idx on accounts (cooling_until) where status = 'cooling';

-- The `account` event of /v1/events carries why an account cools and until when (additive:
-- `reason` and `until` appear only on `cooling`).
create or replace function accounts_status_event() returns trigger language plpgsql as $$
begin
  perform pg_notify('metronome_run_events', json_strip_nulls(json_build_object(
    'type', 'account', 'accountId', new.id, 'tenantId', new.tenant_id, 'status', new.status,
    'reason', case when new.status = 'cooling' then new.cooling_reason end,
    'until', case when new.status = 'cooling' then to_char(new.cooling_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end))::text);
  return null;
end $$;
