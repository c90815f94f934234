import { sql, type RawBuilder } from 'kysely';

/**
 * The UPDATE that skips an account's targets of `chats` (a subquery of `chat_id`s) that nothing
 * was sent to yet in its open runs (queued, running, paused: `finished_at` null, found through
 * runs_account_finished_idx). A target whose request began or that got a part is left alone:
 * its chat is mid-conversation, and stopping between parts would leave half a message. One rule
 * for an opt-out and for a suppression carried to a person's other WhatsApp identity.
 */
export function skipUntouchedTargets(accountId: string, chats: RawBuilder<unknown>, now: Date): RawBuilder<unknown> {
  return sql`
    update run_targets t
       set status = 'skipped', error_code = 'suppressed',
           error_message = 'the chat is on the account''s suppression list', updated_at = ${now}
      from runs r
     where r.account_id = ${accountId}::uuid
       and coalesce(r.finished_at, 'infinity'::timestamptz) = 'infinity'::timestamptz
       and t.run_id = r.id and t.chat_id in (${chats})
       and t.status = 'pending' and t.parts_sent = 0 and t.send_started_at is null`;
}
