import { occurrencesDue, type Schedule } from './schedule.js';

export interface HeldOccurrence {
  schedule: Schedule;
  timezone: string;
  dueAt: Date;
  streak: number;
}

export type HeldDecision = { kind: 'same' } | { kind: 'count'; streak: number } | { kind: 'pause'; streak: number };

/** A due campaign whose account cannot send: its occurrence is held (re-checked every tick) and `autopauseAfter` (0: never) misses in a row pause it. */
export function decideHeld(h: HeldOccurrence, now: Date, autopauseAfter: number): HeldDecision {
  const streak = occurrencesDue(h.schedule, h.timezone, h.dueAt, now);
  if (streak <= h.streak) return { kind: 'same' };
  if (autopauseAfter > 0 && streak >= autopauseAfter) return { kind: 'pause', streak };
  return { kind: 'count', streak };
}

export function noAccountPauseReason(streak: number, accountStatus: string, blockedUntil: Date | null): string {
  const why = accountStatus !== 'active' ? `its account is ${accountStatus}` : `its account is blocked until ${blockedUntil?.toISOString() ?? 'later'}`;
  return `no_account: ${streak} occurrences in a row could not run because ${why}. Fix the account, then set active to true.`;
}
