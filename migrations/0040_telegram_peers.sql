-- What a Telegram user account needs to address a chat (docs/platforms.md, telegram_user,
-- "Peers"): MTProto names a user or a channel by its id *and* the access hash Telegram gave this
-- account for it. GramJS keeps those in memory only, so a fresh process could not address a
-- `-100…` chat or a user it had not just listed. Every peer the account learns (its dialogs, a
-- resolved username, the answer to a send) is kept here and handed to GramJS before a send, on
-- any replica, after any restart. A username is resolved once and found again by `username`.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. A new table; no existing row is touched.
create table telegram_peers (
  account_id uuid not null references accounts (id) on delete cascade,
  -- the chat id a campaign names it by: a user's id, `-{id}` a basic group, `-100{id}` a channel
  chat_id text not null,
  kind text not null check (kind in ('user', 'chat', 'channel')),
  -- as Telegram gave it to this account (a signed 64-bit integer, as text); none for a basic group
  access_hash text,
  -- lower-case, without the @; null when it has none
  username text,
  learnt_at timestamptz not null,
  primary key (account_id, chat_id)
);
create index telegram_peers_username_idx on telegram_peers (account_id, username) where username is not null;
