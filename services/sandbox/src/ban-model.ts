// The ban model: hidden limits a real platform does not publish and enforces by closing the account for good.

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The hidden limits of one account; 0 turns a rule off (every rule is off by default). */
export interface BanRules {
  /** most sends accepted in any rolling hour */
  banHourlyCap: number;
  /** most sends accepted in any rolling 24 hours */
  banDailyCap: number;
  /** least time between two accepted sends of the account, ms */
  banMinGapMs: number;
}

export const NO_BAN: BanRules = { banHourlyCap: 0, banDailyCap: 0, banMinGapMs: 0 };

/** Why accepting one more send at `now` breaks a rule (the ban's sentence), or null; `sendTimes` oldest first. */
export function banBreach(sendTimes: readonly number[], now: number, rules: BanRules): string | null {
  const last = sendTimes.at(-1);
  if (rules.banMinGapMs > 0 && last !== undefined && now - last < rules.banMinGapMs) {
    return `sent ${now - last} ms after the previous send (the platform wants at least ${rules.banMinGapMs} ms)`;
  }
  if (rules.banHourlyCap > 0 && countSince(sendTimes, now - HOUR_MS) + 1 > rules.banHourlyCap) {
    return `a send beyond ${rules.banHourlyCap} in one hour`;
  }
  if (rules.banDailyCap > 0 && countSince(sendTimes, now - DAY_MS) + 1 > rules.banDailyCap) {
    return `a send beyond ${rules.banDailyCap} in 24 hours`;
  }
  return null;
}

/** Sends after `from` (exclusive): a send exactly one window ago has left the window. */
function countSince(sorted: readonly number[], from: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) <= from) lo = mid + 1;
    else hi = mid;
  }
  return sorted.length - lo;
}
