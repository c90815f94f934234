-- Scheduling policies: catch-up after downtime, and run now without the per-chat interval.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Every column added has a constant default (or none), so adding it
-- rewrites no rows.

-- What a campaign does with occurrences the scheduler reaches late (libs/core catch-up.ts).
-- A null lateness is the default: one interval (cron: the gap to the next occurrence), at most a day.
alter table campaigns
  add column catch_up_policy text not null default 'latest'
    constraint campaigns_catch_up_policy_check check (catch_up_policy in ('skip', 'latest', 'all')),
  add column catch_up_max_lateness_seconds integer
    constraint campaigns_catch_up_lateness_check check (catch_up_max_lateness_seconds between 1 and 86400),
  -- the last occurrence of a backlog an `all` catch-up accepted and still has to run: lateness no
  -- longer applies to it while it waits for the runs before it
  add column catch_up_through timestamptz,
  -- occurrences never turned into a run, counted by the scheduler, and the latest of them
  add column skipped_count bigint not null default 0,
  add column last_skipped_at timestamptz;

-- A run now that sends to every chat at once, not held by the per-chat interval gate.
alter table runs add column ignored_interval boolean not null default false;

-- As in migrations/0002, but a run created to ignore the interval is not gated when it is
-- re-queued either: the operator asked for it to reach every chat now.
create or replace function runs_gate_on_requeue() returns trigger language plpgsql as $$
begin
  if new.ignored_interval then
    return null;
  end if;
  -- Only rows the gate moves are written (a cron or once campaign's resume writes none).
  update run_targets t
  set next_attempt_at = g.at
  from (
    select p.chat_id, interval_gate(new.campaign_id, p.chat_id, new.id, new.updated_at) as at
    from run_targets p where p.run_id = new.id and p.status = 'pending'
  ) g
  where t.run_id = new.id and t.chat_id = g.chat_id and t.status = 'pending' and g.at > t.next_attempt_at;
  return null;
end $$;
