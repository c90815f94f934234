-- The reconciler's index of leases, made usable by the reconciler alone. `run_targets_in_flight_idx`
-- (0001) keyed every in-flight target by its lease's end; a sender writing one run's in-flight
-- targets (by run, chat and lease owner, with `status = 'in_flight'`) could be planned through it
-- too, as a bitmap ANDed with the primary key. Every target that was ever in flight leaves an
-- entry there until vacuum removes it, so such a write read them all: about 20,000 entries and
-- 1.4 ms per statement after 20,000 sends, growing with every send until the table is vacuumed
-- (measured in the throughput benchmark, PostgreSQL without autovacuum; with autovacuum it grows
-- between vacuums, by thousands a second at full speed). The predicate now also names
-- `lease_expires_at is not null`, which the reconciler's `lease_expires_at < $now` implies and a
-- sender's statement does not: a sender's write goes by the primary key, a handful of entries.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Built in that transaction (CONCURRENTLY cannot run in one), so target
-- writes wait while it builds; it holds only the targets in flight, a few at any time.
create index run_targets_lease_idx on run_targets (lease_expires_at)
  where status = 'in_flight' and lease_expires_at is not null;
drop index run_targets_in_flight_idx;
