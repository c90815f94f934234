import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

export interface DirectReceipt {
  accountId: string;
  messageId: string;
  chatId: string;
  status: 'delivered' | 'read';
  at: Date;
}

export interface TargetReceipts {
  runId: string;
  chatId: string;
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  deliveredTo: number | null;
  readBy: number | null;
  memberCount: number | null;
}

/** A target the statement moved on: what it says now, what it said before, the first receipt (its index) that named it. */
export interface MovedTarget extends TargetReceipts {
  first: number;
  wasDelivered: boolean;
  wasRead: boolean;
}

interface Row {
  matched: number[] | null;
  moved: {
    first: number;
    run_id: string;
    chat_id: string;
    sent_at: string | null;
    delivered_at: string | null;
    read_at: string | null;
    delivered_to: number | null;
    read_by: number | null;
    member_count: number | null;
    was_delivered: boolean;
    was_read: boolean;
  }[];
}

const date = (s: string | null) => (s === null ? null : new Date(s));

/**
 * Receipts of chats (not group members) in one statement, by ReceiptRepository's rules: targets locked in
 * one order and moved only earlier, first deliveries marked, webhooks written. The indexes of the receipts
 * that matched, and the targets moved.
 */
export async function recordDirect(db: Kysely<DB>, receipts: DirectReceipt[]): Promise<{ matched: number[]; moved: MovedTarget[] }> {
  const result = await sql<Row>`
    with r as (
      select * from unnest(${receipts.map((r) => r.accountId)}::uuid[], ${receipts.map((r) => r.messageId)}::text[],
                           ${receipts.map((r) => r.chatId)}::text[], ${receipts.map((r) => r.status)}::text[], ${receipts.map((r) => r.at)}::timestamptz[])
               with ordinality as r(account_id, message_id, chat_id, status, at, idx)
    ), hits as (
      select r.idx::int - 1 as idx, r.status, r.at, t.run_id, t.chat_id,
             t.delivered_at is not null as was_delivered, t.read_at is not null as was_read
        from r
        join run_targets t on t.chat_id = r.chat_id and t.status = 'sent' and r.message_id = any(t.message_ids)
        join runs u on u.id = t.run_id and u.account_id = r.account_id
       order by t.run_id, t.chat_id
         for update of t
    ), agg as (
      select run_id, chat_id, min(idx) as first, min(at) as delivered, min(at) filter (where status = 'read') as read,
             bool_or(was_delivered) as was_delivered, bool_or(was_read) as was_read
        from hits group by run_id, chat_id
    ), moved as (
      update run_targets t set delivered_at = least(t.delivered_at, agg.delivered), read_at = least(t.read_at, agg.read)
        from agg
       where t.run_id = agg.run_id and t.chat_id = agg.chat_id
         and (t.delivered_at is distinct from least(t.delivered_at, agg.delivered) or t.read_at is distinct from least(t.read_at, agg.read))
      returning agg.first, t.run_id, t.chat_id, t.sent_at, t.delivered_at, t.read_at, t.delivered_to, t.read_by, t.member_count,
                agg.was_delivered, agg.was_read
    ), delivering as (
      update accounts set receipts_seen_at = coalesce(receipts_seen_at, now()),
             status = case when status = 'cooling' and cooling_reason = 'not_delivering' then 'active' else status end,
             cooling_since = case when status = 'cooling' and cooling_reason = 'not_delivering' then null else cooling_since end,
             cooling_reason = case when status = 'cooling' and cooling_reason = 'not_delivering' then null else cooling_reason end,
             updated_at = now()
       where id in (select u.account_id from moved m join runs u on u.id = m.run_id where m.delivered_at is not null and not m.was_delivered)
         and (receipts_seen_at is null or (status = 'cooling' and cooling_reason = 'not_delivering'))
    ), per_run as (
      select u.id as run_id, u.tenant_id, u.campaign_id, u.account_id,
             jsonb_agg(jsonb_build_object(
               'chatId', m.chat_id,
               'deliveredAt', to_char(m.delivered_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'readAt', to_char(m.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'deliveredTo', m.delivered_to, 'readBy', m.read_by, 'memberCount', m.member_count) order by m.chat_id) as targets
        from moved m join runs u on u.id = m.run_id
       group by u.id
    ), hooks as (
      insert into webhook_deliveries (webhook_id, tenant_id, type, subject_id, payload)
      select w.id, p.tenant_id, 'message.status', p.run_id,
             jsonb_build_object('type', 'message.status',
                                'timestamp', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                'data', jsonb_build_object('runId', p.run_id, 'campaignId', p.campaign_id, 'accountId', p.account_id, 'targets', p.targets))
        from per_run p join webhooks w on w.tenant_id = p.tenant_id and w.active and 'message.status' = any(w.events)
    )
    select (select array_agg(idx) from hits) as matched,
           (select coalesce(json_agg(m), '[]') from moved m) as moved`.execute(db);
  const row = result.rows[0]!;
  return {
    matched: row.matched ?? [],
    moved: row.moved.map((m) => ({
      first: m.first,
      runId: m.run_id,
      chatId: m.chat_id,
      sentAt: date(m.sent_at),
      deliveredAt: date(m.delivered_at),
      readAt: date(m.read_at),
      deliveredTo: m.delivered_to,
      readBy: m.read_by,
      memberCount: m.member_count,
      wasDelivered: m.was_delivered,
      wasRead: m.was_read,
    })),
  };
}
