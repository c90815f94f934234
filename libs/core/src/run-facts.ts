import type { DeliveryWindow } from './delivery-window.js';
import type { NewChatHold } from './new-chat-limits.js';

export interface HoldGroup {
  count: number;
  first: Date;
  last: Date;
}

/** Everything the explanation of one run needs, read in one query plus one Redis MGET; each `null` below means "none" or "free". */
export interface RunFacts {
  status: string;
  pausedReason: string | null;
  scheduledAt: Date;
  firstSendAt: Date | null;
  windowEndAt: Date | null;
  timezone: string;
  window: DeliveryWindow;
  autoResume: boolean;
  everySeconds: number | null;
  partsPerChat: number;
  /** `perMinute`: the pace in force, lowered while a cooling's effect recovers */
  account: {
    id: string;
    platform: string;
    status: string;
    blockedUntil: Date | null;
    perMinute: number;
    coolingUntil?: Date | null;
    coolingReason?: string | null;
    /** a send result code (cooling.ts RESTRICTING_CODES) while restricted */
    restrictedBecause?: string | null;
    /** names the proxy, never its login */
    proxyFailure?: string | null;
    newChatHold?: NewChatHold | null;
  };
  total: number;
  skipped: number;
  pending: number;
  inFlight: number;
  due: number;
  dueSince: Date | null;
  holds: Partial<Record<string, HoldGroup>>;
  /** the account's next free pace slot (its GCRA state in Redis) */
  paceFreeAt: Date | null;
  capFreeAt?: Date | null;
  gapFreeAt?: Date | null;
  /** another open run of the account is mid-fan-out while its lock is held */
  accountBusy: boolean;
}
