import { occurrencesDue, type Schedule } from './schedule.js';

/** A due campaign whose account cannot send. */
export interface HeldOccurrence {
  schedule: Schedule;
  timezone: string;
  /** the held occurrence (the campaign's next_run_at) */
  dueAt: Date;
  /** consecutive no-account occurrences recorded so far */
  streak: number;
}

export type HeldDecision =
  /** nothing new: the same occurrence is re-checked next tick */
  | { kind: 'same' }
  /** one or more occurrences passed without an account: the streak grows */
  | { kind: 'count'; streak: number }
  /** the streak reached NO_ACCOUNT_AUTOPAUSE_AFTER: the campaign is paused */
  | { kind: 'pause'; streak: number };

/**
 * What the scheduler does with a due campaign whose account cannot send. The occurrence is
 * held (re-checked every tick); the streak counts consecutive occurrences missed that way, and
 * `autopauseAfter` (0 = never) of them pause the campaign.
 */
export function decideHeld(h: HeldOccurrence, now: Date, autopauseAfter: number): HeldDecision {
  const streak = occurrencesDue(h.schedule, h.timezone, h.dueAt, now);
  if (streak <= h.streak) return { kind: 'same' };
  if (autopauseAfter > 0 && streak >= autopauseAfter) return { kind: 'pause', streak };
  return { kind: 'count', streak };
}

/** The reason a campaign paused for lack of an account shows in the API. */
export function noAccountPauseReason(streak: number, accountStatus: string, blockedUntil: Date | null): string {
  const why = accountStatus !== 'active' ? `its account is ${accountStatus}` : `its account is blocked until ${blockedUntil?.toISOString() ?? 'later'}`;
  return `no_account: ${streak} occurrences in a row could not run because ${why}. Fix the account, then set active to true.`;
}
