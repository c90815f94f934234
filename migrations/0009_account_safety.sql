-- The ban-safety kit's account settings (docs/CONTRACT.md §3, accounts): human pacing, caps and
-- warm-up. All null on existing accounts, which keep sending exactly as before.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. Adding nullable columns without a default rewrites nothing; the
-- index below is built in that transaction (run writes wait while it builds).
alter table accounts
  -- a uniform random wait between two sends, whole seconds; both or neither
  add column send_delay_min_seconds integer check (send_delay_min_seconds between 0 and 86400),
  add column send_delay_max_seconds integer check (send_delay_max_seconds between 0 and 86400),
  -- sends in any rolling hour / 24 hours
  add column hourly_cap integer check (hourly_cap between 1 and 1000000),
  add column daily_cap integer check (daily_cap between 1 and 10000000),
  -- {"startedAt": time, "steps": [{"afterDays": N, "dailyCap": N | null}]}
  add column warmup jsonb,
  add constraint accounts_send_delay_check check (
    (send_delay_min_seconds is null) = (send_delay_max_seconds is null)
    and (send_delay_min_seconds is null or send_delay_min_seconds <= send_delay_max_seconds)
  );

-- Runs of an account that may hold a send of the last 24 hours: open ones and those finished
-- since. The sender reads an account's recent sends through it when Redis lost them (the caps'
-- windows and the last send's time are rebuilt from PostgreSQL); each run's targets then come
-- from run_targets' primary key. Without it the rebuild would read every run the account ever had.
create index runs_account_finished_idx on runs (account_id, (coalesce(finished_at, 'infinity'::timestamptz)));

-- Chats an account must not write to again: they answered blocked, kicked, forbidden or not
-- found, or an operator listed them. A run skips them (`skipped`, code `suppressed`) when it
-- starts; the primary key serves that anti-join and the API's list, in chat order.
create table account_suppressions (
  account_id uuid not null references accounts(id) on delete cascade,
  chat_id text not null,
  -- the error code that suppressed the chat, or 'operator'
  reason text not null,
  created_at timestamptz not null default now(),
  primary key (account_id, chat_id)
);
