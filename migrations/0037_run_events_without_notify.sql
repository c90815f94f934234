-- Run status changes no longer NOTIFY from the run's own transaction: PostgreSQL serializes the
-- commits of every notifying transaction on one lock held through their WAL flush, so the
-- senders' and the scheduler's commits lost group commit (pgbench, 8 clients: 341-587 commits a
-- second with pg_notify, 1,744-2,449 without; bench/results/HISTORY.md). The API reads run_events
-- instead (services/control-api/src/events/run-event-hub.ts). Account and directory changes,
-- rare, still notify.
create or replace function runs_status_event() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    insert into run_events (run_id, tenant_id, status) values (new.id, new.tenant_id, new.status);
  end if;
  return new;
end $$;
