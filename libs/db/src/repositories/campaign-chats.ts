import { foldForSearch, type ChatFacts } from '@metronome/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../types.js';

/** One of a campaign's chats, with what names it and what its texts are rendered with. */
export interface CampaignChatRow {
  chatId: string;
  threadId: number | null;
  /** the directory's title, else the chat's `name` variable */
  title: string | null;
  from: 'target' | 'audience';
  vars: Record<string, string> | null;
  /** what the directory knows of it (its built-ins); null: no entry */
  facts: ChatFacts | null;
}

/** Chats whose title, `name` or id contains `query` (any case, accents folded), after `after`. */
export interface CampaignChatQuery {
  query?: string | undefined;
  limit: number;
  after?: { chatId: string; threadId: number } | undefined;
}

// A value folded as libs/core folds it: NFKD, combining marks removed, lower case.
const fold = (value: RawBuilder<unknown>) => sql`lower(regexp_replace(normalize(${value}, NFKD), '[\u0300-\u036f]', '', 'g'))`;

/**
 * A page of a campaign's chats in (chat id, topic) order as a run created now would take them
 * (run-creation.ts), each with its directory entry. One statement.
 */
export async function campaignChats(db: Kysely<DB>, campaignId: string, q: CampaignChatQuery): Promise<CampaignChatRow[]> {
  const conditions = [sql`true`];
  if (q.after) conditions.push(sql`(h.chat_id, h.thread_id) > (${q.after.chatId}::text, ${q.after.threadId}::bigint)`);
  if (q.query) {
    const pattern = `%${foldForSearch(q.query).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(
      sql`(split_part(d.title_folded, chr(31), 1) like ${pattern} or ${fold(sql`h.chat_id`)} like ${pattern} or ${fold(sql`h.vars ->> 'name'`)} like ${pattern})`,
    );
  }
  const result = await sql<{
    chat_id: string;
    thread_id: string | number;
    vars: Record<string, string> | null;
    source: 'target' | 'audience';
    title: string | null;
    kind: string | null;
    member_count: number | null;
  }>`
    with c as (
      select c.account_id, c.targets, c.target_threads, c.target_vars, c.audience_ids,
        (select a.platform in ('telegram', 'telegram_user') from accounts a where a.id = c.account_id) as topics
      from campaigns c where c.id = ${campaignId}::uuid
    ), chats as (
      -- a topic's variables under its target key (migrations/0039), a chat's under its id
      select t.chat_id, coalesce(c.target_threads[t.i], 0)::bigint as thread_id,
        c.target_vars -> (t.chat_id || case when coalesce(c.target_threads[t.i], 0) = 0 then '' else chr(31) || c.target_threads[t.i]::text end) as vars,
        'target' as source
      from c cross join lateral unnest(c.targets) with ordinality as t(chat_id, i)
      union all
      select m.chat_id, m.thread_id, m.vars, 'audience'
      from c cross join lateral audience_targets(c.audience_ids, target_keys(c.targets, c.target_threads)) as m
      where cardinality(c.audience_ids) > 0 and (m.thread_id = 0 or coalesce(c.topics, false))
    )
    select h.chat_id, h.thread_id, h.vars, h.source, d.title, d.kind, d.member_count
    from chats h
    left join chat_directory d on d.account_id = (select account_id from c) and d.chat_id = h.chat_id
    where ${sql.join(conditions, sql` and `)}
    order by h.chat_id, h.thread_id
    limit ${q.limit}`.execute(db);
  return result.rows.map((r) => {
    const threadId = Number(r.thread_id);
    return {
      chatId: r.chat_id,
      threadId: threadId === 0 ? null : threadId,
      title: r.title || r.vars?.['name'] || null,
      from: r.source,
      vars: r.vars,
      facts: r.kind === null ? null : { title: r.title, kind: r.kind, memberCount: r.member_count },
    };
  });
}
