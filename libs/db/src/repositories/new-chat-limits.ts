import { newChatHold, type NewChatCap, type NewChatLimits } from '@metronome/core';
import type { Kysely } from 'kysely';
import type { DB } from '../types.js';
import { newChatLimitsOf } from './account-rows.js';

const FREE_FOR_MS = 5 * 60_000;

/**
 * What WhatsApp lets an account do with new chats (migrations/0038, libs/core new-chat-limits.ts),
 * written by whichever replica holds the account's socket and read by every replica before a
 * send. Each write is one statement on the account's row.
 */
export class NewChatLimitRepository {
  /**
   * Limits that hold nothing, read in the last `freeForMs`: a send reads them once in that long, not once a message. Only
   * the replica holding the socket writes a hold (dropping its entry), and a socket new here forgets them (what another
   * holder wrote is read afresh); a hold is never kept, so an operator's lift counts at once.
   */
  private readonly free = new Map<string, { limits: NewChatLimits | null; until: number }>();
  /** writes begun or ended: a read that saw one change meanwhile keeps nothing */
  private writes = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly o: { freeForMs?: number; now?: () => number } = {},
  ) {}

  async read(accountId: string): Promise<NewChatLimits | null> {
    const now = (this.o.now ?? Date.now)();
    const known = this.free.get(accountId);
    if (known && now < known.until) return known.limits;
    const writes = this.writes;
    const row = await this.db
      .selectFrom('accounts')
      .select(['new_chats_refused_at', 'reachout_lock_until', 'reachout_lock_type', 'new_chat_cap'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    const limits = row ? newChatLimitsOf(row) : null;
    if (row && writes === this.writes && newChatHold(limits, new Date(now)) === null)
      this.free.set(accountId, { limits, until: now + (this.o.freeForMs ?? FREE_FOR_MS) });
    else this.free.delete(accountId);
    return limits;
  }

  /** The next read goes to PostgreSQL: the account's socket just opened here, and another replica may have held it. */
  forget(accountId: string): void {
    this.free.delete(accountId);
  }

  /** A message to a new chat was refused with 463: new chats wait until an operator lifts it (the first refusal's time is kept). */
  async refused(accountId: string, at: Date): Promise<void> {
    await this.written(accountId, (db) =>
      db
        .updateTable('accounts')
        .set((eb) => ({ new_chats_refused_at: eb.fn.coalesce('new_chats_refused_at', eb.val(at)), updated_at: at }))
        .where('id', '=', accountId)
        .execute(),
    );
  }

  /** WhatsApp's reach-out time lock as told now: until its end, or null when it is not active. */
  async reachoutLock(accountId: string, lock: { until: Date; type: string } | null, now: Date): Promise<void> {
    await this.written(accountId, (db) =>
      db
        .updateTable('accounts')
        .set({ reachout_lock_until: lock?.until ?? null, reachout_lock_type: lock?.type ?? null, updated_at: now })
        .where('id', '=', accountId)
        .execute(),
    );
  }

  /** WhatsApp's new-chat cap as told now. */
  async cap(accountId: string, cap: NewChatCap): Promise<void> {
    const stored = { ...cap, cycleEndsAt: cap.cycleEndsAt?.toISOString() ?? null, toldAt: cap.toldAt.toISOString() };
    await this.written(accountId, (db) =>
      db
        .updateTable('accounts')
        .set({ new_chat_cap: JSON.stringify(stored), updated_at: cap.toldAt })
        .where('id', '=', accountId)
        .execute(),
    );
  }

  private async written(accountId: string, write: (db: Kysely<DB>) => Promise<unknown>): Promise<void> {
    this.writes++;
    this.free.delete(accountId);
    try {
      await write(this.db);
    } finally {
      this.writes++;
    }
  }
}
