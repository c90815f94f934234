import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';

/** What an opt-out changed: chats newly listed, and targets of open runs skipped with it. */
export interface OptOutWrite {
  listed: number;
  skipped: number;
}

/**
 * Opt-out by reply (migrations/0011): the sender reads an account's keywords when a reply comes
 * in, and lists the chat when it matched. Replies come at human rates: one query each.
 */
export class OptOutRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** The account's keywords; empty when it has none, or no longer exists. */
  async keywords(accountId: string): Promise<string[]> {
    const row = await this.db.selectFrom('accounts').select('opt_out_keywords').where('id', '=', accountId).executeTakeFirst();
    return row?.opt_out_keywords ?? [];
  }

  /**
   * Lists the chat (every spelling a campaign may name it by) with reason `opt_out`, keeping
   * the reason of a spelling already listed, and every spelling of the person's other WhatsApp
   * identity the account learnt (migrations/0028); and in the same statement skips the chat's
   * targets that nothing was sent to yet in the account's open runs (queued, running, paused:
   * `finished_at` null, found through runs_account_finished_idx), so a run under way writes to
   * it no more. A target whose request began or that got a part is left alone: its chat is
   * already mid-conversation, and stopping between parts would leave half a message.
   */
  async optOut(accountId: string, chatIds: string[], now: Date): Promise<OptOutWrite> {
    const result = await sql<{ listed: number; skipped: number }>`
      with names as (
        select distinct n as chat_id from unnest(${sql.val(chatIds)}::text[]) c, whatsapp_identity_spellings(${accountId}::uuid, c) n
      ), listed as (
        insert into account_suppressions (account_id, chat_id, reason, created_at)
        select ${accountId}::uuid, chat_id, 'opt_out', ${now} from names
        on conflict (account_id, chat_id) do nothing
        returning 1
      ), skipped as (
        update run_targets t
           set status = 'skipped', error_code = 'suppressed',
               error_message = 'the chat is on the account''s suppression list', updated_at = ${now}
          from runs r
         where r.account_id = ${accountId}::uuid
           and coalesce(r.finished_at, 'infinity'::timestamptz) = 'infinity'::timestamptz
           and t.run_id = r.id and t.chat_id in (select chat_id from names)
           and t.status = 'pending' and t.parts_sent = 0 and t.send_started_at is null
        returning 1
      )
      select (select count(*) from listed)::int as listed, (select count(*) from skipped)::int as skipped`.execute(this.db);
    return result.rows[0] ?? { listed: 0, skipped: 0 };
  }
}
