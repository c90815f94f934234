/**
 * A new number's warm-up: a daily cap that grows with the account's age, because a platform
 * bans a fresh number that sends at full volume at once. Pure: `now` is a parameter.
 */

/** From `afterDays` days after the start, at most `dailyCap` sends a day; null: the warm-up is over. */
export interface WarmupStep {
  afterDays: number;
  dailyCap: number | null;
}

export interface Warmup {
  startedAt: Date;
  /** by `afterDays`, ascending */
  steps: WarmupStep[];
}

/**
 * The documented default ramp (CONTRACT §3, accounts): 20 sends a day, 50 from day 4, 100
 * from day 8, 200 from day 15, and no warm-up cap from day 31.
 */
export const DEFAULT_WARMUP_STEPS: readonly WarmupStep[] = [
  { afterDays: 0, dailyCap: 20 },
  { afterDays: 4, dailyCap: 50 },
  { afterDays: 8, dailyCap: 100 },
  { afterDays: 15, dailyCap: 200 },
  { afterDays: 31, dailyCap: null },
];

const DAY_MS = 86_400_000;

/**
 * Today's warm-up cap: the step reached by the whole days since `startedAt`; before the start
 * the first step's. Null once a step without a cap is reached (the warm-up is over).
 */
export function warmupCapToday(w: Warmup, now: Date): number | null {
  const days = Math.floor((now.getTime() - w.startedAt.getTime()) / DAY_MS);
  const steps = [...w.steps].sort((a, b) => a.afterDays - b.afterDays);
  let cap: number | null = steps[0]?.dailyCap ?? null;
  for (const step of steps) if (step.afterDays <= days) cap = step.dailyCap;
  return cap;
}

/** The daily cap in force now: the account's `dailyCap` and today's warm-up cap, the lower; null when neither. */
export function effectiveDailyCap(dailyCap: number | null, warmup: Warmup | null, now: Date): number | null {
  const ramp = warmup ? warmupCapToday(warmup, now) : null;
  if (dailyCap === null) return ramp;
  return ramp === null ? dailyCap : Math.min(dailyCap, ramp);
}
