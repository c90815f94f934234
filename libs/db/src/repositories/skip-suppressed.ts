import { sql, type RawBuilder } from 'kysely';
import { chatKeySql } from './chat-key-sql.js';

/**
 * The UPDATE skipping an account's targets of `chats` not yet sent to in its open runs (one begun or partly sent is left
 * alone: no half messages). One rule for opt-outs and for suppressions carried to another WhatsApp identity.
 * `chats` are keys on the account's `platform` (chatKeySql): a telegram_user target typed in any case is found.
 */
export function skipUntouchedTargets(accountId: string, chats: RawBuilder<unknown>, now: Date, platform = 'whatsapp'): RawBuilder<unknown> {
  return sql`
    update run_targets t
       set status = 'skipped', error_code = 'suppressed',
           error_message = 'the chat is on the account''s suppression list', updated_at = ${now}
      from runs r
     where r.account_id = ${accountId}::uuid
       and coalesce(r.finished_at, 'infinity'::timestamptz) = 'infinity'::timestamptz
       and t.run_id = r.id and ${chatKeySql(platform, sql`t.chat_id`)} in (${chats})
       and t.status = 'pending' and t.parts_sent = 0 and t.send_started_at is null`;
}
