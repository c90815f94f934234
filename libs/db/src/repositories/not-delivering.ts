import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** When an account counts as not delivering (NOT_DELIVERING_* settings). */
export interface NotDeliveringSettings {
  /** its last this many sends... */
  sends: number;
  /** ...made within this long before now... */
  windowMs: number;
  /** ...and at least this long ago (a receipt takes a moment), none delivered */
  graceMs: number;
}

export interface NotDelivering {
  id: string;
  tenantId: string;
  platform: string;
  /** the sends judged (all without a delivery receipt) */
  sends: number;
}

/**
 * An account that stops delivering (migrations/0025): its platform takes its sends, but none of
 * its last `sends` sends of the window got a delivery receipt. It is set `cooling`, reason
 * `not_delivering`, without an end (its runs wait; its `account.status` webhook and `account`
 * event say so). Only active accounts whose platform has told receipts before are judged; one
 * lifts itself when a delivery receipt comes again (ReceiptRepository) or by an operator.
 */
export class NotDeliveringRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async mark(now: Date, s: NotDeliveringSettings): Promise<NotDelivering[]> {
    const since = new Date(now.getTime() - s.windowMs);
    const until = new Date(now.getTime() - s.graceMs);
    const result = await sql<{ id: string; tenant_id: string; platform: string; n: number }>`
      with judged as (
        select a.id, j.n, j.delivered
          from accounts a
          cross join lateral (
            select count(*)::int as n, count(x.delivered_at)::int as delivered from (
              select t.delivered_at
                from runs r join run_targets t on t.run_id = r.id
               where r.account_id = a.id and (r.status in ('queued', 'running', 'paused') or r.finished_at > ${since})
                 and t.status = 'sent' and t.sent_at > ${since} and t.sent_at <= ${until}
               order by t.sent_at desc
               limit ${s.sends}) x) j
         where a.status = 'active' and a.receipts_seen_at is not null and a.receipts_seen_at < ${until}
      )
      update accounts a
         set status = 'cooling', cooling_since = ${now}, cooling_until = null, cooling_reason = 'not_delivering', updated_at = ${now}
        from judged j
       where a.id = j.id and a.status = 'active' and j.n >= ${s.sends} and j.delivered = 0
      returning a.id, a.tenant_id, a.platform, j.n`.execute(this.db);
    return result.rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, platform: r.platform, sends: r.n }));
  }
}
