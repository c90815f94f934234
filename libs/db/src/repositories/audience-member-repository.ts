import { isBuiltinVariable } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import { chatVariablesSql } from './chat-variables-sql.js';
import { targetKeySql } from './settle-sent.js';

/** A chat of an audience with its variables (null: none). */
export interface AudienceMember {
  chatId: string;
  threadId?: number;
  vars: Record<string, string> | null;
}

export interface MemberWrite extends AudienceMember {
  search: string;
}

/** A page of members in chat order after `afterChat`, whose search text holds `query`. */
export interface MemberPage {
  limit: number;
  afterChat?: string | undefined;
  afterThread?: number | undefined;
  query?: string | undefined;
}

const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The members of audiences (migrations/0015); a write keeps the audience's member_count in the same
 * statement. Callers check the audience is the tenant's.
 */
export class AudienceMemberRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Adds or replaces members (distinct chat ids) in one statement; a member named again takes the new variables. */
  async upsert(audienceId: string, members: MemberWrite[], now: Date): Promise<{ added: number; updated: number }> {
    if (members.length === 0) return { added: 0, updated: 0 };
    const result = await sql<{ added: number; updated: number }>`
      with up as (
        insert into audience_members as m (audience_id, chat_id, thread_id, vars, search, created_at, updated_at)
        select ${audienceId}::uuid, u.chat_id, u.thread_id, u.vars, u.search, ${now}, ${now}
        from unnest(${members.map((m) => m.chatId)}::text[], ${members.map((m) => m.threadId ?? 0)}::bigint[],
          ${members.map((m) => (m.vars === null ? null : JSON.stringify(m.vars)))}::jsonb[],
          ${members.map((m) => m.search)}::text[]) as u(chat_id, thread_id, vars, search)
        on conflict (audience_id, chat_id, thread_id) do update set vars = excluded.vars, search = excluded.search, updated_at = excluded.updated_at
        -- xmax is 0 on a row this statement inserted, the locker's id on one it updated
        returning (m.xmax = 0) as inserted
      ), counted as (
        update audiences set member_count = member_count + (select count(*) from up where inserted), updated_at = ${now}
        where id = ${audienceId}::uuid
      )
      select (count(*) filter (where inserted))::int as added, (count(*) filter (where not inserted))::int as updated from up`.execute(this.db);
    return result.rows[0]!;
  }

  async countExisting(audienceId: string, members: { chatId: string; threadId?: number }[]): Promise<number> {
    if (members.length === 0) return 0;
    const result = await sql<{ n: number }>`
      select count(*)::int as n from audience_members m
      join unnest(${members.map((m) => m.chatId)}::text[], ${members.map((m) => m.threadId ?? 0)}::bigint[]) as u(chat_id, thread_id)
        on m.chat_id = u.chat_id and m.thread_id = u.thread_id
      where m.audience_id = ${audienceId}::uuid`.execute(this.db);
    return result.rows[0]!.n;
  }

  async list(audienceId: string, page: MemberPage): Promise<AudienceMember[]> {
    const after = page.afterChat === undefined ? sql`` : sql`and (chat_id, thread_id) > (${page.afterChat}, ${page.afterThread ?? 0}::bigint)`;
    const query = page.query ? sql`and search like ${`%${likeLiteral(page.query)}%`}` : sql``;
    const result = await sql<{ chat_id: string; thread_id: number; vars: Record<string, string> | null }>`
      select chat_id, thread_id, vars from audience_members
      where audience_id = ${audienceId}::uuid ${after} ${query}
      order by chat_id, thread_id limit ${page.limit}`.execute(this.db);
    return result.rows.map((r) => (r.thread_id ? { chatId: r.chat_id, threadId: r.thread_id, vars: r.vars } : { chatId: r.chat_id, vars: r.vars }));
  }

  /** Which of `audienceIds` are the tenant's and have a member in a forum topic. */
  async withTopics(tenantId: string, audienceIds: string[]): Promise<Set<string>> {
    if (audienceIds.length === 0) return new Set();
    const result = await sql<{ id: string }>`
      select a.id from audiences a
      where a.id = any(${audienceIds}::uuid[]) and a.tenant_id = ${tenantId}::uuid
        and exists (select 1 from audience_members m where m.audience_id = a.id and m.thread_id <> 0)`.execute(this.db);
    return new Set(result.rows.map((r) => r.id));
  }

  async remove(audienceId: string, chatIds: string[], now: Date): Promise<number> {
    if (chatIds.length === 0) return 0;
    const result = await sql<{ removed: number }>`
      with gone as (
        delete from audience_members where audience_id = ${audienceId}::uuid and chat_id = any(${chatIds}::text[]) returning 1
      ), counted as (
        update audiences set member_count = member_count - (select count(*) from gone), updated_at = ${now}
        where id = ${audienceId}::uuid and exists (select 1 from gone)
      )
      select count(*)::int as removed from gone`.execute(this.db);
    return result.rows[0]!.removed;
  }

  /**
   * The first member of `audienceIds` lacking one of the variables `names` (inline `exceptKeys` left out),
   * built-ins judged from `builtinsOf`'s directory as a run takes them; null when none lacks one.
   */
  async firstMissingVariable(
    audienceIds: string[],
    names: string[],
    exceptKeys: string[],
    builtinsOf?: { tenantId: string; accountId: string },
  ): Promise<{ audienceId: string; chatId: string; name: string } | null> {
    if (audienceIds.length === 0 || names.length === 0) return null;
    const withBuiltins = builtinsOf !== undefined && names.some(isBuiltinVariable);
    const vars = withBuiltins ? chatVariablesSql(sql`m.vars`, 'd') : sql`m.vars`;
    const directory = withBuiltins
      ? sql`left join chat_directory d on d.account_id = ${builtinsOf.accountId}::uuid and d.chat_id = m.chat_id
          and exists (select 1 from accounts o where o.id = ${builtinsOf.accountId}::uuid and o.tenant_id = ${builtinsOf.tenantId}::uuid)`
      : sql``;
    const result = await sql<{ audience_id: string; chat_id: string; name: string }>`
      select m.audience_id, m.chat_id, n.name
      from unnest(${audienceIds}::uuid[]) with ordinality as a(id, pos)
      cross join lateral (
        select m.audience_id, m.chat_id, ${vars} as vars from audience_members m ${directory}
        where m.audience_id = a.id and not (coalesce(${vars} ?& ${names}::text[], false))
          and not (${targetKeySql('m')} = any(${exceptKeys}::text[]))
        order by m.chat_id limit 1
      ) m
      cross join lateral (
        select x.name from unnest(${names}::text[]) with ordinality as x(name, pos)
        where m.vars is null or not (m.vars ? x.name) order by x.pos limit 1
      ) n
      order by a.pos limit 1`.execute(this.db);
    const row = result.rows[0];
    return row ? { audienceId: row.audience_id, chatId: row.chat_id, name: row.name } : null;
  }

  /** A chat's variables as a run would take them (the first audience listing it); undefined when none lists it. */
  async varsOf(audienceIds: string[], chatId: string): Promise<Record<string, string> | null | undefined> {
    if (audienceIds.length === 0) return undefined;
    const result = await sql<{ vars: Record<string, string> | null }>`
      select m.vars from unnest(${audienceIds}::uuid[]) with ordinality as a(id, pos)
      join audience_members m on m.audience_id = a.id and m.chat_id = ${chatId}
      order by a.pos limit 1`.execute(this.db);
    const row = result.rows[0];
    return row ? row.vars : undefined;
  }

  /** A member as a run takes it: `chat` from the first audience listing it, else the first member; null: none. */
  async firstMember(audienceIds: string[], chat?: { chatId: string; threadId: number }): Promise<AudienceMember | null> {
    if (audienceIds.length === 0) return null;
    const only = chat ? sql`and m.chat_id = ${chat.chatId} and m.thread_id = ${chat.threadId}::bigint` : sql``;
    const result = await sql<{ chat_id: string; thread_id: string | number; vars: Record<string, string> | null }>`
      select m.chat_id, m.thread_id, m.vars from unnest(${audienceIds}::uuid[]) with ordinality as a(id, pos)
      join audience_members m on m.audience_id = a.id ${only}
      order by a.pos, m.chat_id, m.thread_id limit 1`.execute(this.db);
    const row = result.rows[0];
    if (!row) return null;
    const threadId = Number(row.thread_id);
    return threadId ? { chatId: row.chat_id, threadId, vars: row.vars } : { chatId: row.chat_id, vars: row.vars };
  }

  /** How many targets a run created now would have: `targetKeys` and the members, each (chat, topic) once. */
  async runChatCount(audienceIds: string[], targetKeys: string[]): Promise<number> {
    if (audienceIds.length === 0) return new Set(targetKeys).size;
    const result = await sql<{ n: number }>`
      select count(*)::int as n from (
        select unnest(${targetKeys}::text[]) as k
        union
        select ${targetKeySql('m')} from audience_members m where m.audience_id = any(${audienceIds}::uuid[])
      ) x`.execute(this.db);
    return result.rows[0]!.n;
  }
}
