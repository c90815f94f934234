-- The sender's claim takes a run's due pending targets in a fixed order, `next_attempt_at` then
-- `chat_id`, a few at a time (libs/db target-sends.ts). `run_targets_claimable_idx` (0001) kept
-- only `(run_id, next_attempt_at)`, so every claim read all of the run's due targets and sorted
-- them by chat to take the first few: 3.3 ms per claim for a run with 5,000 due, about 0.05 ms
-- for one with 50, and a 10,000-chat run sent its first fifth at 380 sends/s and its last at
-- 660 (`node bench/run.mjs big-run`). With the chat in the index, the claim reads the targets in
-- its order and stops after the few it takes, whatever the run's size. The run's earliest due
-- times (loadRun) and next due time (the job's hand-over) read the same index's prefix.
--
-- Left as it is: the claim's and the settle's writes find their rows by the primary key, and a
-- generic plan may take the run's key prefix alone, reading all of the run's entries (about
-- 0.1 ms per write at 2,000 targets). Planned for the chats written, they would read a few.
--
-- Built inside the migration's transaction, like 0013 (CONCURRENTLY cannot run in one): writes
-- to run_targets wait while it builds. It holds only pending targets.
create index run_targets_due_idx on run_targets (run_id, next_attempt_at, chat_id) where status = 'pending';
drop index run_targets_claimable_idx;
