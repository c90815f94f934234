/** A new number's warm-up: a daily cap that grows with the account's age, since platforms ban a fresh number sending at full volume. */

/** From `afterDays` after the start, at most `dailyCap` sends a day; null: the warm-up is over. */
export interface WarmupStep {
  afterDays: number;
  dailyCap: number | null;
}

export interface Warmup {
  startedAt: Date;
  steps: WarmupStep[];
}

/** The documented default ramp (CONTRACT §3). */
export const DEFAULT_WARMUP_STEPS: readonly WarmupStep[] = [
  { afterDays: 0, dailyCap: 20 },
  { afterDays: 4, dailyCap: 50 },
  { afterDays: 8, dailyCap: 100 },
  { afterDays: 15, dailyCap: 200 },
  { afterDays: 31, dailyCap: null },
];

const DAY_MS = 86_400_000;

/** Today's cap: the step reached by whole days since `startedAt` (before it, the first); null once the warm-up is over. */
export function warmupCapToday(w: Warmup, now: Date): number | null {
  const days = Math.floor((now.getTime() - w.startedAt.getTime()) / DAY_MS);
  const steps = [...w.steps].sort((a, b) => a.afterDays - b.afterDays);
  let cap: number | null = steps[0]?.dailyCap ?? null;
  for (const step of steps) if (step.afterDays <= days) cap = step.dailyCap;
  return cap;
}

export function effectiveDailyCap(dailyCap: number | null, warmup: Warmup | null, now: Date): number | null {
  const ramp = warmup ? warmupCapToday(warmup, now) : null;
  if (dailyCap === null) return ramp;
  return ramp === null ? dailyCap : Math.min(dailyCap, ramp);
}
