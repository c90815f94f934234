import { GroupCommit } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

interface SentRow {
  accountId: string;
  messageId: string;
  message: Buffer;
  sentAt: Date;
}

/** WhatsApp messages kept for decryption retries (migrations/0018), deleted after the setting's days. */
export class WhatsAppSentMessageRepository {
  /** every account's messages sent meanwhile go in one statement, while the one before it runs */
  private readonly batches = new GroupCommit<null, void, SentRow>((_, rows) => this.insert(rows).then(() => rows.map(() => undefined)));

  constructor(private readonly db: Kysely<DB>) {}

  /** Keeps a sent message (a re-send of the same id replaces it and its time). */
  remember(accountId: string, messageId: string, message: Buffer, sentAt: Date): Promise<void> {
    return this.batches.ask(null, { accountId, messageId, message, sentAt });
  }

  private async insert(rows: SentRow[]): Promise<void> {
    // one row per message, the last asked (a statement may not update one row twice); an account deleted meanwhile fails none
    const last = [...new Map(rows.map((r) => [`${r.accountId}:${r.messageId}`, r])).values()];
    await sql`
      insert into whatsapp_sent_messages (account_id, message_id, message, sent_at)
      select u.* from unnest(${last.map((r) => r.accountId)}::uuid[], ${last.map((r) => r.messageId)}::text[],
                             ${last.map((r) => r.message)}::bytea[], ${last.map((r) => r.sentAt)}::timestamptz[]) as u(a, m, b, t)
       where exists (select 1 from accounts where id = u.a)
      on conflict (account_id, message_id) do update set message = excluded.message, sent_at = excluded.sent_at`.execute(this.db);
  }

  async find(accountId: string, messageId: string, since: Date): Promise<Buffer | null> {
    const row = await this.db
      .selectFrom('whatsapp_sent_messages')
      .select('message')
      .where('account_id', '=', accountId)
      .where('message_id', '=', messageId)
      .where('sent_at', '>=', since)
      .executeTakeFirst();
    return row?.message ?? null;
  }

  /** Deletes up to `limit` messages sent before `before`, oldest first; returns how many. */
  async deleteSentBefore(before: Date, limit: number): Promise<number> {
    const result = await sql<{ n: number }>`
      with gone as (
        delete from whatsapp_sent_messages
         where ctid = any(array(select ctid from whatsapp_sent_messages where sent_at < ${before} order by sent_at limit ${limit}))
        returning 1
      )
      select count(*)::int as n from gone`.execute(this.db);
    return result.rows[0]?.n ?? 0;
  }
}
