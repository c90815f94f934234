/** The pace as the platform sees it: what it receives stays within `burst + pace × W` in every window W of at least a second. */

/** Slots are spaced this much wider than the configured pace, so requests written a little late never add up to one send too many in a window. */
export const PACE_MARGIN = 0.02;

export function pacedPerMinute(configuredPerMinute: number): number {
  return configuredPerMinute / (1 + PACE_MARGIN);
}

/** The job's own pace over when its requests were really written (a GCRA, `tat` = theoretical arrival time): a late write pushes the next ones. */
export interface WrittenPace {
  tat: number;
}

export function writeWaitMs(pace: WrittenPace, now: number, intervalMs: number, burst: number): number {
  return Math.max(0, pace.tat - (burst - 1) * intervalMs - now);
}

export function afterWrite(pace: WrittenPace, at: number, intervalMs: number): WrittenPace {
  return { tat: Math.max(pace.tat, at) + intervalMs };
}

/** Whether a lane waits in-process for a target due at `dueAt`, measured from its turn (from the job's start, interval campaigns drifted later). */
export function waitsInline(dueAt: number, now: number, maxWaitMs: number): boolean {
  return dueAt - now <= maxWaitMs;
}
