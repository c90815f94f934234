import type { DeliveryWindow } from './delivery-window.js';
import type { NewChatHold } from './new-chat-limits.js';

/** Pending targets held by one kind of hold: how many, and when the first and the last are free. */
export interface HoldGroup {
  count: number;
  first: Date;
  last: Date;
}

/** Everything the explanation of one run needs, read in one query plus one Redis MGET. */
export interface RunFacts {
  status: string;
  pausedReason: string | null;
  scheduledAt: Date;
  /** the run's first send ever; null before it */
  firstSendAt: Date | null;
  windowEndAt: Date | null;
  timezone: string;
  window: DeliveryWindow;
  autoResume: boolean;
  /** an interval campaign's everySeconds; null for cron and once campaigns */
  everySeconds: number | null;
  partsPerChat: number;
  /** `perMinute`: the pace in force (lowered while a cooling's effect recovers); `coolingUntil`/`coolingReason` while `cooling` */
  account: {
    id: string;
    platform: string;
    status: string;
    blockedUntil: Date | null;
    perMinute: number;
    coolingUntil?: Date | null;
    coolingReason?: string | null;
    /** which restriction while restricted (a send result code, cooling.ts RESTRICTING_CODES); null or absent: unknown */
    restrictedBecause?: string | null;
    /** why the account's proxy failed last (naming the proxy, never its login); null or absent: it did not */
    proxyFailure?: string | null;
    /** what holds its new chats now (WhatsApp: new-chat-limits.ts); null or absent: nothing */
    newChatHold?: NewChatHold | null;
  };
  total: number;
  skipped: number;
  pending: number;
  inFlight: number;
  /** pending targets due now (`next_attempt_at <= now`), and the earliest of their due times */
  due: number;
  dueSince: Date | null;
  /** by hold kind (limits.ts TargetHold) */
  holds: Partial<Record<string, HoldGroup>>;
  /** when the account's pace next has a free slot (from its GCRA state in Redis); null: free */
  paceFreeAt: Date | null;
  /** when a capped account's hourly or daily window next frees a slot (Redis); null or absent: no cap met */
  capFreeAt?: Date | null;
  /** when the account's human gap (sendDelaySeconds) lets its next send go (Redis); null or absent: free */
  gapFreeAt?: Date | null;
  /** another open run of the same account is mid-fan-out while the account's lock is held */
  accountBusy: boolean;
}
