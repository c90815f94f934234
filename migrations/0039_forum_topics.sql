-- Forum topics (docs/CONTRACT.md §3, campaigns: threadId): a Telegram target may name a topic of
-- its chat (message_thread_id). The same chat in two topics is two targets, so a target's
-- identity is (chat_id, thread_id), 0 meaning no topic (the chat's General).
--
-- A target's key where one text names it (campaigns.target_vars, the inline targets an audience
-- leaves out): the chat id, or for a topic chat id U+001F thread id (no chat id holds a control
-- character, so keys never collide). Existing keys are chat ids: they keep their meaning.
--
-- New columns with constant defaults: no row is rewritten. The primary keys are rebuilt (the
-- tables are locked while they build), and the member receipts' foreign key follows the new key.
-- Safe when two services migrate at once (one transaction, advisory lock).
alter table run_targets add column thread_id bigint not null default 0;
alter table target_member_receipts drop constraint target_member_receipts_run_id_chat_id_fkey;
alter table target_member_receipts add column thread_id bigint not null default 0;
alter table run_targets drop constraint run_targets_pkey;
alter table run_targets add constraint run_targets_pkey primary key (run_id, chat_id, thread_id);
alter table target_member_receipts
  add constraint target_member_receipts_target_fkey foreign key (run_id, chat_id, thread_id)
  references run_targets (run_id, chat_id, thread_id) on delete cascade;

-- each inline target's topic, in the order of targets (0: none); null when no target names one
alter table campaigns add column target_threads bigint[];

alter table audience_members add column thread_id bigint not null default 0;
alter table audience_members drop constraint audience_members_pkey;
alter table audience_members add constraint audience_members_pkey primary key (audience_id, chat_id, thread_id);

-- audience_chats (migrations/0015) with topics: each target (chat, topic) once, with the vars of
-- the first audience listing it, leaving out the inline targets' keys `except_keys`.
create function audience_targets(ids uuid[], except_keys text[])
returns table (chat_id text, thread_id bigint, vars jsonb) language plpgsql stable rows 100 cost 1 as $$
#variable_conflict use_column
begin
  return query
    select distinct on (m.chat_id, m.thread_id) m.chat_id, m.thread_id, m.vars
    from unnest(ids) with ordinality as a(id, pos)
    join audience_members m on m.audience_id = a.id
    left join unnest(except_keys) as x(k)
      on x.k = m.chat_id || case when m.thread_id = 0 then '' else chr(31) || m.thread_id::text end
    where x.k is null
    order by m.chat_id, m.thread_id, a.pos;
end $$;

-- a campaign's inline target keys (as above), from its targets and target_threads
create function target_keys(targets text[], threads bigint[])
returns text[] language sql immutable as $$
  select case when threads is null then targets else array(
    select t.chat_id || case when coalesce(t.thread_id, 0) = 0 then '' else chr(31) || t.thread_id::text end
    from unnest(targets, threads) as t(chat_id, thread_id)
    where t.chat_id is not null
  ) end
$$;
