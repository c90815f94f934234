import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** How many chats a run created now would reach (CONTRACT, "Reach"), and why the others not. */
export interface CampaignReach {
  reach: number;
  targets: number;
  /** members of its audiences that are not targets, each (chat, topic) once */
  audienceMembers: number;
  /** of those, suppressed or erased chats */
  suppressed: number;
  /** of those not suppressed, chats the directory says it cannot post in */
  cannotPost: number;
}

/** The chats a campaign reaches, as a run would take them (run-creation.ts); one statement. */
export async function campaignReach(
  db: Kysely<DB>,
  c: { tenantId: string; accountId: string; targetChats: string[]; targetKeys: string[]; audienceIds: string[] },
): Promise<CampaignReach> {
  const result = await sql<{ targets: number; members: number; suppressed: number; cannot_post: number }>`
    with account as (
      select a.id, a.platform, a.platform in ('telegram', 'telegram_user') as topics from accounts a where a.id = ${c.accountId}::uuid and a.tenant_id = ${c.tenantId}::uuid
    ), chats as (
      select t.chat_id, true as inline from unnest(${c.targetChats}::text[]) as t(chat_id)
      union all
      -- as a run takes them: a member in a forum topic only for a Telegram account
      select m.chat_id, false from audience_targets(${c.audienceIds}::uuid[], ${c.targetKeys}::text[]) as m
      where cardinality(${c.audienceIds}::uuid[]) > 0 and (m.thread_id = 0 or coalesce((select topics from account), false))
    ), judged as (
      select h.inline,
        exists (select 1 from account a join account_suppressions s on s.account_id = a.id where s.chat_id = chat_key(a.platform, h.chat_id))
          or exists (select 1 from tenants tn join erased_chats e on e.tenant_id = tn.id
                     where tn.id = ${c.tenantId}::uuid and e.chat_hash = sha256(tn.chat_salt || convert_to(h.chat_id, 'UTF8'))) as suppressed,
        exists (select 1 from account a join chat_directory d on d.account_id = a.id where d.chat_id = h.chat_id and not d.can_send) as cannot_post
      from chats h
    )
    select count(*) filter (where inline)::int as targets, count(*) filter (where not inline)::int as members,
      count(*) filter (where suppressed)::int as suppressed, count(*) filter (where cannot_post and not suppressed)::int as cannot_post
    from judged`.execute(db);
  const r = result.rows[0]!;
  return {
    reach: r.targets + r.members - r.suppressed - r.cannot_post,
    targets: r.targets,
    audienceMembers: r.members,
    suppressed: r.suppressed,
    cannotPost: r.cannot_post,
  };
}
