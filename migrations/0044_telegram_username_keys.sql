-- Telegram usernames are case-insensitive: `@Friend_One`, `friend_one` and `@FRIEND_ONE` name one
-- user. A telegram_user account compares chats by a key (libs/core chatKey): a username, with or
-- without the @, as `@` and lower case; any other chat id, and every other platform's, as it is.
-- Its suppressions are written under that key, and its targets (kept as the operator typed them)
-- are compared by it: a STOP or a reply from `friend_one` finds the target `@Friend_One`, and the
-- listing skips `@FRIEND_ONE` in the next run.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. A new function; the telegram_user accounts' suppressions under another
-- spelling are moved to their key (a key already listed keeps its reason, else the earliest spelling's).

-- ASCII only (`collate "C"`): no locale turns `I` into anything but `i`.
create function chat_key(platform text, chat text) returns text
language sql immutable parallel safe as $$
  select case
    when platform = 'telegram_user' and chat collate "C" ~ '^@?[A-Za-z][A-Za-z0-9_]{3,31}$'
      then '@' || lower(ltrim(chat, '@') collate "C")
    else chat
  end
$$;

insert into account_suppressions (account_id, chat_id, reason, created_at)
select distinct on (s.account_id, chat_key(a.platform, s.chat_id)) s.account_id, chat_key(a.platform, s.chat_id), s.reason, s.created_at
  from account_suppressions s join accounts a on a.id = s.account_id
 where a.platform = 'telegram_user'
 order by s.account_id, chat_key(a.platform, s.chat_id), s.created_at, s.chat_id
on conflict (account_id, chat_id) do nothing;

delete from account_suppressions s using accounts a
 where a.id = s.account_id and a.platform = 'telegram_user' and s.chat_id <> chat_key(a.platform, s.chat_id);
