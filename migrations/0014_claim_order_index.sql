-- A sender's statements read only the targets they take or hold, whatever the run's size.
--
-- The claim takes a run's due pending targets in a fixed order, `next_attempt_at` then
-- `chat_id`, a few at a time (libs/db target-sends.ts). `run_targets_claimable_idx` (0001) kept
-- only `(run_id, next_attempt_at)`, so every claim read all of the run's due targets and sorted
-- them by chat to take the first few: 3.3 ms per claim for a run with 5,000 due, about 0.05 ms
-- for one with 50, and a 10,000-chat run sent its first fifth at 380 sends/s and its last at
-- 660 (`node bench/run.mjs big-run`). With the chat in the index, the claim reads the targets in
-- its order and stops after the few it takes. The run's earliest due times (loadRun) and next
-- due time (the job's last statement) read the same index's prefix.
--
-- A job's writes of its answers (sent, failed, given back) are fenced by its lease: run, lease
-- owner, `in_flight`. They found their rows by the primary key, and a generic plan (which a
-- sender's statements get after five calls) estimates a run at a handful of targets, so it took
-- the run's key prefix alone and read every target of the run: 1.5 ms per write at 10,000.
-- `run_targets_held_idx` finds a job's own targets: its entries are the in-flight targets, and
-- those a vacuum has not yet removed of the same job (a job's lease owner is its own).
--
-- Left as it is: the claim's write of the targets it took finds them by the primary key, and
-- may likewise read the run's key prefix (about 0.1 ms at 2,000 targets).
--
-- Built inside the migration's transaction, like 0013 (CONCURRENTLY cannot run in one): writes
-- to run_targets wait while they build. They hold only pending and in-flight targets.
create index run_targets_due_idx on run_targets (run_id, next_attempt_at, chat_id) where status = 'pending';
drop index run_targets_claimable_idx;
create index run_targets_held_idx on run_targets (run_id, lease_owner) where status = 'in_flight';
