-- Settling `unknown` by asking the platform (docs/CONTRACT.md §3 "Accounts", §5): an `http`
-- account whose platform drops a request whose Idempotency-Key it has already seen (answering
-- it as the first time) is `platform_deduplicates`. A send to it whose answer leaves delivery
-- in doubt (a timeout after the write, a sender killed mid-request) is sent again with the same
-- key instead of being left `unknown`: the platform's answer settles it.
--
-- New columns with constant defaults: no table rewrite, no existing row changes meaning.
alter table accounts add column platform_deduplicates boolean not null default false;

-- When an answer first left this chat's delivery in doubt and it was sent again with the same
-- key to settle it; null: never. A `sent` target with it was settled by the platform.
alter table run_targets add column ambiguous_at timestamptz;
