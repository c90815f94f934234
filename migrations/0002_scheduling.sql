-- Scheduling: the per-chat interval gate.
--
-- An interval campaign never reaches a chat twice less than everySeconds apart, however slow,
-- paused, resumed or retried its runs are. The gate is each chat's own last delivery of the
-- campaign; a target is created (or re-queued) with next_attempt_at no earlier than that
-- delivery plus everySeconds, and the sender's claim query, which honours next_attempt_at,
-- does the rest. One campaign has at most one queued or running run, so whenever a run enters
-- `queued` every other run of the campaign has stopped sending, and the gate it computes holds.

-- Runs of a campaign that may still hold a recent delivery: open ones (no finished_at) and
-- those finished recently. Keeps the gate's lookup small however long the campaign's history.
create index runs_campaign_finished_idx on runs (campaign_id, (coalesce(finished_at, 'infinity'::timestamptz)));

-- The earliest moment `chat` may receive interval campaign `campaign` again, judged at `ref`
-- (the new run's scheduled time, or the moment a run is re-queued), not counting run
-- `exclude`. 'epoch' when nothing holds it back (no delivery yet, or not an interval campaign).
-- A delivery's time is an upper bound of when the platform could have received it:
--   sent       → sent_at (stamped after the platform answered the last part)
--   in_flight  → lease_expires_at (the send finishes before its lease, or becomes unknown)
--   unknown, or some parts delivered → updated_at (when the outcome was written)
-- Runs that finished more than everySeconds + 15 minutes before `ref` cannot matter: the
-- 15 minutes cover a send still in flight when its run was cancelled (leases are shorter).
create function interval_gate(campaign uuid, chat text, exclude uuid, ref timestamptz)
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
  join runs r on r.campaign_id = c.id and r.id <> interval_gate.exclude
    and coalesce(r.finished_at, 'infinity'::timestamptz) > interval_gate.ref - c.every - interval '15 minutes'
  join run_targets t on t.run_id = r.id and t.chat_id = interval_gate.chat
$$;

-- A run that goes back to `queued` (operator resume, automatic resume, retry-failed) gates its
-- pending targets again: the campaign's other runs may have reached those chats meanwhile.
-- `updated_at` is the moment of the re-queue, set by the caller's clock.
create function runs_gate_on_requeue() returns trigger language plpgsql as $$
begin
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

create trigger runs_gate_on_requeue after update of status on runs
  for each row when (new.status = 'queued' and old.status is distinct from 'queued')
  execute function runs_gate_on_requeue();
