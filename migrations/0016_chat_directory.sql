-- The chat directory (docs/CONTRACT.md §3, "Chat directory"): each account's chats as its
-- platform lists them, a synced copy so that listing and searching never calls the platform.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. New tables only; no existing row is touched.

-- A trigram index lets a selective "title or id contains" search skip the account's other
-- entries. A trusted extension (PostgreSQL 13+, contrib): a database owner may create it.
create extension if not exists pg_trgm;

create table chat_directory (
  account_id uuid not null references accounts (id) on delete cascade,
  chat_id text not null check (length(chat_id) between 1 and 256),
  title text check (length(title) <= 1000),
  -- libs/core foldForSearch(title) || U+001F || foldForSearch(chat_id): what a search matches,
  -- and the listing's order (folded title, then chat id)
  title_folded text not null,
  kind text not null check (kind in ('group', 'direct', 'channel')),
  member_count integer check (member_count >= 0),
  can_send boolean not null,
  cannot_send_reason text
    check (cannot_send_reason in ('announce_only', 'left', 'removed', 'blocked', 'forbidden', 'not_found')),
  -- when a listing last named this chat (a send's refusal does not move it)
  last_sync_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (account_id, chat_id),
  check (can_send = (cannot_send_reason is null))
);

-- Listing pages in title order within one account (the cursor is (title_folded, chat_id)).
create index chat_directory_order_idx on chat_directory (account_id, title_folded, chat_id);
-- "contains" searches, `account_id = … and title_folded like '%…%'`: the planner takes this index
-- for a rare query of three characters or more (then filters the account), and walks the
-- account's entries in title order (chat_directory_order_idx) for a common or short one.
create index chat_directory_search_idx on chat_directory using gin (title_folded gin_trgm_ops);

-- Where each account's directory sync stands. No row: never synced.
create table chat_directory_syncs (
  account_id uuid primary key references accounts (id) on delete cascade,
  status text not null check (status in ('syncing', 'ok', 'backing_off', 'unsupported', 'failed')),
  -- entries listed so far while syncing
  synced integer not null default 0 check (synced >= 0),
  -- entries in the directory (kept by the repository's writes)
  size integer not null default 0 check (size >= 0),
  -- backing_off: when the sync is retried
  until timestamptz,
  -- backing_off, unsupported, failed: why
  reason text,
  -- the end of the latest complete listing
  last_sync_at timestamptz,
  -- the latest sync asked for (API, account creation)
  requested_at timestamptz,
  updated_at timestamptz not null
);

-- Every change of a sync reaches /v1/events as a `directory` event, through the channel run and
-- account events use; `type` tells it apart.
create function chat_directory_sync_event() returns trigger language plpgsql as $$
begin
  perform pg_notify('metronome_run_events', json_strip_nulls(json_build_object(
    'type', 'directory', 'accountId', new.account_id,
    'tenantId', (select tenant_id from accounts where id = new.account_id),
    'status', new.status, 'synced', new.synced, 'size', new.size, 'reason', new.reason,
    'until', to_char(new.until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))::text);
  return null;
end $$;

create trigger chat_directory_sync_event after insert or update on chat_directory_syncs
  for each row execute function chat_directory_sync_event();
