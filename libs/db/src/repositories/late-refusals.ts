import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import { demoteRun } from './run-status.js';

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
   * already moved). A run that had finished `success` becomes `partial` in the same statement
   * (its `run.status` event and webhook follow): not every chat got it after all.
   */
  async refuse(
    accountId: string,
    chatId: string,
    messageId: string,
    status: 'failed' | 'unknown',
    code: string,
    message: string,
    now: Date,
  ): Promise<string[]> {
    const demote = demoteRun(now);
    const result = await sql<{ run_id: string }>`
      with moved as (
        update run_targets t set status = ${status}, error_code = ${code}, error_message = ${message}, updated_at = ${now}
        where t.chat_id = ${chatId} and t.status = 'sent' and ${messageId} = any(t.message_ids)
          and t.run_id in (select r.id from runs r where r.account_id = ${accountId}::uuid)
        returning t.run_id
      ), demoted as (
        update runs r set ${demote.set}
        where r.id in (select run_id from moved) and ${demote.from}
        returning r.id
      )
      select run_id from moved`.execute(this.db);
    return result.rows.map((r) => r.run_id);
  }
}
