import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** WhatsApp messages kept for decryption retries (migrations/0018), deleted after the setting's days. */
export class WhatsAppSentMessageRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Keeps a sent message (a re-send of the same id replaces it and its time). */
  async remember(accountId: string, messageId: string, message: Buffer, sentAt: Date): Promise<void> {
    await this.db
      .insertInto('whatsapp_sent_messages')
      .values({ account_id: accountId, message_id: messageId, message, sent_at: sentAt })
      .onConflict((oc) =>
        oc.columns(['account_id', 'message_id']).doUpdateSet({ message: (eb) => eb.ref('excluded.message'), sent_at: (eb) => eb.ref('excluded.sent_at') }),
      )
      .execute();
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
