import type { NewChatCap, NewChatLimits } from '@metronome/core';
import type { Kysely } from 'kysely';
import type { DB } from '../types.js';
import { newChatLimitsOf } from './account-rows.js';

/**
 * What WhatsApp lets an account do with new chats (migrations/0038, libs/core new-chat-limits.ts),
 * written by whichever replica holds the account's socket and read by every replica before a
 * send. Each write is one statement on the account's row.
 */
export class NewChatLimitRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async read(accountId: string): Promise<NewChatLimits | null> {
    const row = await this.db
      .selectFrom('accounts')
      .select(['new_chats_refused_at', 'reachout_lock_until', 'reachout_lock_type', 'new_chat_cap'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    return row ? newChatLimitsOf(row) : null;
  }

  /** A message to a new chat was refused with 463: new chats wait until an operator lifts it (the first refusal's time is kept). */
  async refused(accountId: string, at: Date): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set((eb) => ({ new_chats_refused_at: eb.fn.coalesce('new_chats_refused_at', eb.val(at)), updated_at: at }))
      .where('id', '=', accountId)
      .execute();
  }

  /** WhatsApp's reach-out time lock as told now: until its end, or null when it is not active. */
  async reachoutLock(accountId: string, lock: { until: Date; type: string } | null, now: Date): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({ reachout_lock_until: lock?.until ?? null, reachout_lock_type: lock?.type ?? null, updated_at: now })
      .where('id', '=', accountId)
      .execute();
  }

  /** WhatsApp's new-chat cap as told now. */
  async cap(accountId: string, cap: NewChatCap): Promise<void> {
    const stored = { ...cap, cycleEndsAt: cap.cycleEndsAt?.toISOString() ?? null, toldAt: cap.toldAt.toISOString() };
    await this.db
      .updateTable('accounts')
      .set({ new_chat_cap: JSON.stringify(stored), updated_at: cap.toldAt })
      .where('id', '=', accountId)
      .execute();
  }
}
