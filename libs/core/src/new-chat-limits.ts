// What WhatsApp lets an account do with new one-to-one chats (docs/platforms.md, "New chats"), kept in PostgreSQL for every replica. A chat is new
// when the account holds no privacy token (tctoken) for it; groups never are. A 463 refusal has no end: an operator lifts it.
export interface NewChatLimits {
  refusedAt: Date | null;
  reachoutLock: { until: Date; type: string } | null;
  cap: NewChatCap | null;
}

/** WhatsApp's meter of messages to people who have not answered (Baileys' NewChatMessageCapInfo). */
export interface NewChatCap {
  status: string;
  total: number | null;
  used: number | null;
  cycleEndsAt: Date | null;
  toldAt: Date;
}

export const NEW_CHATS_REFUSED = 'new_chats_refused';
export const REACHOUT_TIME_LOCK = 'reachout_time_lock';
export const NEW_CHAT_CAP = 'new_chat_cap';
export const NEW_CHAT_HOLD_CODES: readonly string[] = [NEW_CHATS_REFUSED, REACHOUT_TIME_LOCK, NEW_CHAT_CAP];

export const NEW_CHAT_RECHECK_MS = 10 * 60_000;

export interface NewChatHold {
  code: string;
  until: Date | null;
  words: string;
}

export function capHolds(cap: NewChatCap | null, now: Date): boolean {
  if (!cap?.cycleEndsAt || cap.cycleEndsAt.getTime() <= now.getTime()) return false;
  return cap.status === 'CAPPED' || (cap.total !== null && cap.used !== null && cap.total > 0 && cap.used >= cap.total);
}

/** What holds the account's new chats at `now`, or null: of several, the one that lasts longest (no end first). */
export function newChatHold(l: NewChatLimits | null, now: Date): NewChatHold | null {
  if (!l) return null;
  if (l.refusedAt) {
    return {
      code: NEW_CHATS_REFUSED,
      until: null,
      words:
        'WhatsApp refused a message to a new chat (463: no privacy token for it): new chats wait until an operator lifts the hold; chats that wrote to the account and groups keep going.',
    };
  }
  const t = now.getTime();
  const lock = l.reachoutLock && l.reachoutLock.until.getTime() > t ? l.reachoutLock : null;
  const cap = capHolds(l.cap, now) ? l.cap : null;
  if (lock && (!cap || lock.until.getTime() >= cap.cycleEndsAt!.getTime())) {
    return {
      code: REACHOUT_TIME_LOCK,
      until: lock.until,
      words: `WhatsApp locked the account out of new chats (reach-out time lock, ${lock.type}); they wait until it ends, other chats and groups keep going.`,
    };
  }
  if (cap) {
    const quota = cap.total !== null ? ` (${cap.used ?? '?'} of ${cap.total} used)` : '';
    return {
      code: NEW_CHAT_CAP,
      until: cap.cycleEndsAt,
      words: `WhatsApp's cap on messages to people who have not answered is reached${quota}; new chats wait for the next cycle, other chats and groups keep going.`,
    };
  }
  return null;
}

export function newChatWaitMs(hold: NewChatHold, now: Date): number {
  return hold.until ? Math.max(1_000, hold.until.getTime() - now.getTime()) : NEW_CHAT_RECHECK_MS;
}
