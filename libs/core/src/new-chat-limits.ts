/**
 * What WhatsApp lets an account do with NEW one-to-one chats (docs/platforms.md, "New chats"):
 * account state in PostgreSQL that every replica honours, each with its end. A chat is new when
 * the account holds no privacy token (tctoken) for it — WhatsApp's own test: a person who wrote
 * to the account issued one; groups are never new. Existing chats and groups keep going.
 *
 * - `refusedAt`: WhatsApp refused a message to a new chat with 463 (no privacy token): WhatsApp
 *   sets no end; new chats wait until an operator lifts it (POST …/cooling/lift).
 * - `reachoutLock`: WhatsApp's reach-out time lock, until its `timeEnforcementEnds`.
 * - `cap`: WhatsApp's new-chat message cap, CAPPED (or its quota used up) until the cycle's end.
 */
export interface NewChatLimits {
  refusedAt: Date | null;
  reachoutLock: { until: Date; type: string } | null;
  cap: NewChatCap | null;
}

/** WhatsApp's meter of messages to people who have not answered (Baileys' NewChatMessageCapInfo), as last told. */
export interface NewChatCap {
  /** NONE → FIRST_WARNING → SECOND_WARNING → CAPPED */
  status: string;
  total: number | null;
  used: number | null;
  cycleEndsAt: Date | null;
  toldAt: Date;
}

export const NEW_CHATS_REFUSED = 'new_chats_refused';
export const REACHOUT_TIME_LOCK = 'reachout_time_lock';
export const NEW_CHAT_CAP = 'new_chat_cap';
/** The `chat-wait` codes of a new chat held by one of the limits (a target's error code while it waits). */
export const NEW_CHAT_HOLD_CODES: readonly string[] = [NEW_CHATS_REFUSED, REACHOUT_TIME_LOCK, NEW_CHAT_CAP];

/** How often a new chat held with no end set (a 463) is looked at again, ms. */
export const NEW_CHAT_RECHECK_MS = 10 * 60_000;

export interface NewChatHold {
  code: string;
  /** when the hold ends by itself; null: an operator lifts it */
  until: Date | null;
  /** one plain sentence for the operator */
  words: string;
}

/** The cap holds new chats while CAPPED or its quota is used, until the cycle ends. */
export function capHolds(cap: NewChatCap | null, now: Date): boolean {
  if (!cap?.cycleEndsAt || cap.cycleEndsAt.getTime() <= now.getTime()) return false;
  return cap.status === 'CAPPED' || (cap.total !== null && cap.used !== null && cap.total > 0 && cap.used >= cap.total);
}

/**
 * What holds the account's new chats at `now`, or null. Of several, the one that lasts longest
 * (no end first): a new chat may go only once all of them ended.
 */
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

/** How long a new chat held by `hold` waits before it is looked at again, ms. */
export function newChatWaitMs(hold: NewChatHold, now: Date): number {
  return hold.until ? Math.max(1_000, hold.until.getTime() - now.getTime()) : NEW_CHAT_RECHECK_MS;
}
