import { chatKey } from '@metronome/core';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../types.js';
import { recordDirect, type TargetReceipts } from './receipt-statement.js';

/** One receipt a platform told: a message of the account delivered to or read in a chat. */
export interface ReceiptInput {
  messageId: string;
  chatId: string;
  status: 'delivered' | 'read';
  at: Date;
  /** groups: the member whose receipt it is (each member counts once) */
  member?: string | null;
  memberCount?: number | null;
}

export interface ReceiptChange extends TargetReceipts {
  firstDelivered: boolean;
  firstRead: boolean;
}

export interface ReceiptSubmission {
  accountId: string;
  receipts: ReceiptInput[];
}

export interface ReceiptOutcome {
  matched: boolean[];
  changed: ReceiptChange[];
}

interface Hit {
  idx: number;
  run_id: string;
  chat_id: string;
}

/** Receipts onto `sent` targets by message id and chat (migrations/0022): times only move earlier; a group member counts once. */
export class ReceiptRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * A chat of the account wrote at `at`: its `sent` targets within `windowMs` before, not yet answered, count a reply. How many it marked.
   * `platform`: the account's; a telegram_user username matches its targets in any case (migrations/0044).
   */
  async reply(accountId: string, chatIds: string[], at: Date, windowMs: number, platform = 'whatsapp'): Promise<number> {
    if (chatIds.length === 0) return 0;
    const since = sql`${at}::timestamptz - make_interval(secs => ${windowMs / 1000})`;
    const window = sql`t.status = 'sent' and t.replied_at is null and t.sent_at <= ${at} and t.sent_at > ${since}`;
    const result =
      platform === 'telegram_user'
        ? // no index on the key: the targets of the account's runs open in the window (a cancelled run's last send settles after it ends)
          await sql`
      update run_targets t set replied_at = ${at}
       where chat_key('telegram_user', t.chat_id) = any(${[...new Set(chatIds.map((c) => chatKey(platform, c)))]}::text[]) and ${window}
         and t.run_id in (select r.id from runs r where r.account_id = ${accountId}::uuid
                            and coalesce(r.finished_at, 'infinity'::timestamptz) > ${since} - interval '1 hour')`.execute(this.db)
        : await sql`
      update run_targets t set replied_at = ${at}
       where t.chat_id = any(${chatIds}::text[]) and ${window}
         and t.run_id in (select r.id from runs r where r.account_id = ${accountId}::uuid)`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  async httpAccounts(): Promise<{ id: string; credentials: Buffer }[]> {
    const rows = await this.db
      .selectFrom('accounts')
      .select(['id', 'credentials'])
      .where('platform', '=', 'http')
      .where('credentials', 'is not', null)
      .execute();
    return rows.map((r) => ({ id: r.id, credentials: r.credentials! }));
  }

  async record(accountId: string, receipts: ReceiptInput[]): Promise<ReceiptOutcome> {
    return (await this.recordMany([{ accountId, receipts }]))[0]!;
  }

  /** Several accounts' receipts in one write: chats in one statement, group members in one transaction; outcomes as `record`'s. */
  async recordMany(submissions: ReceiptSubmission[]): Promise<ReceiptOutcome[]> {
    const flat: { s: number; r: ReceiptInput; accountId: string }[] = [];
    submissions.forEach((sub, s) => sub.receipts.forEach((r) => flat.push({ s, r, accountId: sub.accountId })));
    const outcomes: ReceiptOutcome[] = submissions.map((sub) => ({ matched: sub.receipts.map(() => false), changed: [] }));
    if (flat.length === 0) return outcomes;
    const offsets: number[] = [];
    submissions.reduce((at, sub, s) => ((offsets[s] = at), at + sub.receipts.length), 0);
    if (flat.every((f) => !f.r.member)) {
      const { matched, moved } = await recordDirect(
        this.db,
        flat.map((f) => ({ accountId: f.accountId, messageId: f.r.messageId, chatId: f.r.chatId, status: f.r.status, at: f.r.at })),
      );
      for (const i of matched) outcomes[flat[i]!.s]!.matched[i - offsets[flat[i]!.s]!] = true;
      for (const m of moved)
        outcomes[flat[m.first]!.s]!.changed.push({
          runId: m.runId,
          chatId: m.chatId,
          sentAt: m.sentAt,
          deliveredAt: m.deliveredAt,
          readAt: m.readAt,
          deliveredTo: m.deliveredTo,
          readBy: m.readBy,
          memberCount: m.memberCount,
          firstDelivered: !m.wasDelivered && m.deliveredAt !== null,
          firstRead: !m.wasRead && m.readAt !== null,
        });
      return outcomes;
    }
    return this.db.transaction().execute(async (trx) => {
      const hits = await this.lockHits(trx, flat);
      const owner = new Map<string, number>();
      for (const h of hits) {
        const { s } = flat[h.idx]!;
        outcomes[s]!.matched[h.idx - offsets[s]!] = true;
        const key = `${h.run_id}\u0000${h.chat_id}`;
        if (!owner.has(key) || owner.get(key)! > s) owner.set(key, s);
      }
      const receipts = flat.map((f) => f.r);
      const direct = hits.filter((h) => !receipts[h.idx]!.member);
      const members = hits.filter((h) => receipts[h.idx]!.member);
      const changed = [...(await this.applyDirect(trx, direct, receipts)), ...(await this.applyMembers(trx, members, receipts))];
      for (const c of changed) outcomes[owner.get(`${c.runId}\u0000${c.chatId}`)!]!.changed.push(c);
      const delivering = submissions.filter((_, s) => outcomes[s]!.changed.some((c) => c.firstDelivered)).map((sub) => sub.accountId);
      if (delivering.length > 0) await this.delivering(trx, [...new Set(delivering)]);
      await this.webhooks(trx, changed);
      return outcomes;
    });
  }

  /** A delivery receipt came: the account tells receipts, and a `not_delivering` account lifts itself. */
  private async delivering(trx: Transaction<DB>, accountIds: string[]): Promise<void> {
    await sql`
      update accounts set receipts_seen_at = coalesce(receipts_seen_at, now()),
             status = case when status = 'cooling' and cooling_reason = 'not_delivering' then 'active' else status end,
             cooling_since = case when status = 'cooling' and cooling_reason = 'not_delivering' then null else cooling_since end,
             cooling_reason = case when status = 'cooling' and cooling_reason = 'not_delivering' then null else cooling_reason end,
             updated_at = now()
       where id = any(${accountIds}::uuid[]) and (receipts_seen_at is null or (status = 'cooling' and cooling_reason = 'not_delivering'))`.execute(trx);
  }

  /** `message.status` webhooks: one per run and webhook, with the targets this write moved. */
  private async webhooks(trx: Transaction<DB>, changed: ReceiptChange[]): Promise<void> {
    if (changed.length === 0) return;
    const iso = (d: Date | null) => (d ? d.toISOString() : null);
    const targets = changed.map((c) => ({
      runId: c.runId,
      chatId: c.chatId,
      deliveredAt: iso(c.deliveredAt),
      readAt: iso(c.readAt),
      deliveredTo: c.deliveredTo,
      readBy: c.readBy,
      memberCount: c.memberCount,
    }));
    await sql`
      with t as (select * from jsonb_to_recordset(${JSON.stringify(targets)}::jsonb)
                   as t("runId" uuid, "chatId" text, "deliveredAt" text, "readAt" text, "deliveredTo" int, "readBy" int, "memberCount" int)),
           per_run as (
             select r.id as run_id, r.tenant_id, r.campaign_id, r.account_id,
                    jsonb_agg(jsonb_build_object('chatId', t."chatId", 'deliveredAt', t."deliveredAt", 'readAt', t."readAt",
                              'deliveredTo', t."deliveredTo", 'readBy', t."readBy", 'memberCount', t."memberCount") order by t."chatId") as targets
               from t join runs r on r.id = t."runId"
              group by r.id)
      insert into webhook_deliveries (webhook_id, tenant_id, type, subject_id, payload)
      select w.id, p.tenant_id, 'message.status', p.run_id,
             jsonb_build_object('type', 'message.status',
                                'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                'data', jsonb_build_object('runId', p.run_id, 'campaignId', p.campaign_id, 'accountId', p.account_id, 'targets', p.targets))
        from per_run p join webhooks w on w.tenant_id = p.tenant_id and w.active and 'message.status' = any(w.events)`.execute(trx);
  }

  /** The targets named, locked in one order (two writers of one group never undercount). */
  private async lockHits(trx: Transaction<DB>, flat: { r: ReceiptInput; accountId: string }[]): Promise<Hit[]> {
    const result = await sql<Hit>`
      select r.idx::int as idx, t.run_id, t.chat_id
        from unnest(${flat.map((f) => f.accountId)}::uuid[], ${flat.map((f) => f.r.messageId)}::text[], ${flat.map((f) => f.r.chatId)}::text[])
             with ordinality as r(account_id, message_id, chat_id, idx)
        join run_targets t on t.chat_id = r.chat_id and t.status = 'sent' and r.message_id = any(t.message_ids)
        join runs u on u.id = t.run_id and u.account_id = r.account_id
       order by t.run_id, t.chat_id
         for update of t`.execute(trx);
    return result.rows.map((h) => ({ ...h, idx: h.idx - 1 }));
  }

  private async applyDirect(trx: Transaction<DB>, hits: Hit[], receipts: ReceiptInput[]): Promise<ReceiptChange[]> {
    if (hits.length === 0) return [];
    const rs = hits.map((h) => receipts[h.idx]!);
    const result = await sql<RawChange>`
      with r as (
        select * from unnest(${hits.map((h) => h.run_id)}::uuid[], ${hits.map((h) => h.chat_id)}::text[], ${rs.map((r) => r.status)}::text[], ${rs.map((r) => r.at)}::timestamptz[])
          as r(run_id, chat_id, status, at)
      ), agg as (
        select run_id, chat_id, min(at) as delivered, min(at) filter (where status = 'read') as read from r group by run_id, chat_id
      )
      update run_targets t set delivered_at = least(t.delivered_at, agg.delivered), read_at = least(t.read_at, agg.read)
        from agg, run_targets before
       where t.run_id = agg.run_id and t.chat_id = agg.chat_id and before.run_id = t.run_id and before.chat_id = t.chat_id
         and (t.delivered_at is distinct from least(t.delivered_at, agg.delivered) or t.read_at is distinct from least(t.read_at, agg.read))
      returning ${CHANGE_COLUMNS}`.execute(trx);
    return result.rows.map(toChange);
  }

  private async applyMembers(trx: Transaction<DB>, hits: Hit[], receipts: ReceiptInput[]): Promise<ReceiptChange[]> {
    if (hits.length === 0) return [];
    const rs = hits.map((h) => receipts[h.idx]!);
    await sql`
      insert into target_member_receipts (run_id, chat_id, member, delivered_at, read_at)
      select run_id, chat_id, member, min(at), min(at) filter (where status = 'read')
        from unnest(${hits.map((h) => h.run_id)}::uuid[], ${hits.map((h) => h.chat_id)}::text[], ${rs.map((r) => r.member!)}::text[], ${rs.map((r) => r.status)}::text[], ${rs.map((r) => r.at)}::timestamptz[])
          as r(run_id, chat_id, member, status, at)
       group by run_id, chat_id, member
      on conflict (run_id, chat_id, member) do update
        set delivered_at = least(target_member_receipts.delivered_at, excluded.delivered_at),
            read_at = least(target_member_receipts.read_at, excluded.read_at)`.execute(trx);
    const sizes = new Map<string, number>();
    for (let i = 0; i < hits.length; i++) {
      const n = rs[i]!.memberCount;
      const k = `${hits[i]!.run_id}\u0000${hits[i]!.chat_id}`;
      if (n != null && n > (sizes.get(k) ?? 0)) sizes.set(k, n);
      else if (!sizes.has(k)) sizes.set(k, 0);
    }
    const keys = [...sizes.keys()].map((k) => k.split('\u0000') as [string, string]);
    const result = await sql<RawChange>`
      with g as (
        select * from unnest(${keys.map((k) => k[0])}::uuid[], ${keys.map((k) => k[1])}::text[], ${[...sizes.values()]}::int[]) as g(run_id, chat_id, size)
      ), m as (
        select g.run_id, g.chat_id, nullif(g.size, 0) as size,
               count(x.delivered_at)::int as delivered_to, count(x.read_at)::int as read_by,
               min(x.delivered_at) as delivered, min(x.read_at) as read
          from g join target_member_receipts x on x.run_id = g.run_id and x.chat_id = g.chat_id
         group by g.run_id, g.chat_id, g.size
      )
      update run_targets t
         set delivered_to = m.delivered_to, read_by = m.read_by,
             member_count = coalesce(m.size, t.member_count),
             delivered_at = least(t.delivered_at, m.delivered), read_at = least(t.read_at, m.read)
        from m, run_targets before
       where t.run_id = m.run_id and t.chat_id = m.chat_id and before.run_id = t.run_id and before.chat_id = t.chat_id
         and (t.delivered_to is distinct from m.delivered_to or t.read_by is distinct from m.read_by
              or t.member_count is distinct from coalesce(m.size, t.member_count)
              or t.delivered_at is distinct from least(t.delivered_at, m.delivered) or t.read_at is distinct from least(t.read_at, m.read))
      returning ${CHANGE_COLUMNS}`.execute(trx);
    return result.rows.map(toChange);
  }
}

interface RawChange {
  run_id: string;
  chat_id: string;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  delivered_to: number | null;
  read_by: number | null;
  member_count: number | null;
  was_delivered: boolean;
  was_read: boolean;
}

const CHANGE_COLUMNS = sql.raw(
  't.run_id, t.chat_id, t.sent_at, t.delivered_at, t.read_at, t.delivered_to, t.read_by, t.member_count, before.delivered_at is not null as was_delivered, before.read_at is not null as was_read',
);

function toChange(r: RawChange): ReceiptChange {
  return {
    runId: r.run_id,
    chatId: r.chat_id,
    sentAt: r.sent_at,
    deliveredAt: r.delivered_at,
    readAt: r.read_at,
    deliveredTo: r.delivered_to,
    readBy: r.read_by,
    memberCount: r.member_count,
    firstDelivered: !r.was_delivered && r.delivered_at !== null,
    firstRead: !r.was_read && r.read_at !== null,
  };
}
