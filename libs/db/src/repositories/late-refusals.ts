import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/**
 * A message the platform took, then refused (WhatsApp's server ERROR ack after the write): its
 * target moves from `sent` to `failed` (or `unknown` when the refusal is ambiguous). The run's
 * counts are derived from its targets (run-counts.ts), so they follow.
 */
export class LateRefusalRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The `sent` target of one of the account's runs whose messages include `messageId` for
   * `chatId`, moved to `status`; the run ids it moved (none: not recorded as sent yet, or
   * already moved).
   */
  async refuse(accountId: string, chatId: string, messageId: string, status: 'failed' | 'unknown', code: string, message: string, now: Date): Promise<string[]> {
    const rows = await this.db
      .updateTable('run_targets')
      .set({ status, error_code: code, error_message: message, updated_at: now })
      .where('chat_id', '=', chatId)
      .where('status', '=', 'sent')
      .where(sql<boolean>`${messageId} = any(message_ids)`)
      .where('run_id', 'in', (q) => q.selectFrom('runs').select('id').where('account_id', '=', accountId))
      .returning('run_id')
      .execute();
    return rows.map((r) => r.run_id);
  }
}
