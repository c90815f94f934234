import { chatKey } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import { skipUntouchedTargets } from './skip-suppressed.js';

/** What an opt-out changed: chats newly listed, and targets of open runs skipped with it. */
export interface OptOutWrite {
  listed: number;
  skipped: number;
}

/** Opt-out by reply (migrations/0011): one query per reply. */
export class OptOutRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async keywords(accountId: string): Promise<string[]> {
    const row = await this.db.selectFrom('accounts').select('opt_out_keywords').where('id', '=', accountId).executeTakeFirst();
    return row?.opt_out_keywords ?? [];
  }

  /**
   * Lists the chat (every spelling, and its other WhatsApp identity's: migrations/0028; a telegram_user
   * username by its key: migrations/0044) with reason `opt_out`, and in the same statement skips its
   * untouched targets in the account's open runs. `platform`: the account's.
   */
  async optOut(accountId: string, chatIds: string[], now: Date, platform = 'whatsapp'): Promise<OptOutWrite> {
    const keys = [...new Set(chatIds.map((c) => chatKey(platform, c)))];
    const result = await sql<{ listed: number; skipped: number }>`
      with names as (
        select distinct n as chat_id from unnest(${sql.val(keys)}::text[]) c, whatsapp_identity_spellings(${accountId}::uuid, c) n
      ), listed as (
        insert into account_suppressions (account_id, chat_id, reason, created_at)
        select ${accountId}::uuid, chat_id, 'opt_out', ${now} from names
        on conflict (account_id, chat_id) do nothing
        returning 1
      ), skipped as (
        ${skipUntouchedTargets(accountId, sql`select chat_id from names`, now, platform)}
        returning 1
      )
      select (select count(*) from listed)::int as listed, (select count(*) from skipped)::int as skipped`.execute(this.db);
    return result.rows[0] ?? { listed: 0, skipped: 0 };
  }
}
