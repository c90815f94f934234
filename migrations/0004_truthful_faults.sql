-- Truthful under faults.
--
-- `unknown` means exactly one thing: a request for the target was written to the platform and
-- no answer came back. A claimed target that is still waiting (for its pace slot, its media, a
-- jitter, a lock) has not reached the platform: when its lease expires it goes back to
-- `pending`, no attempt counted. `send_started_at` tells the two apart: stamped when the request
-- for part `parts_sent` begins, cleared whenever that part's answer is written (a delivered part
-- moves `parts_sent` on; a settlement ends the claim).
alter table run_targets add column send_started_at timestamptz;

-- A campaign the scheduler could not turn into a run (a value the storage cannot hold, a
-- schedule that cannot be evaluated) is deactivated with the reason here, so one bad row never
-- stops the tick for everyone else. Cleared when the campaign is edited or reactivated.
alter table campaigns add column last_error text;
