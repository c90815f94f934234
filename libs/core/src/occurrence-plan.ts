import { occurrenceJitterMs } from './backoff.js';
import { DEFAULT_CATCH_UP, noSkips, planCatchUp, totalSkipped, type CatchUp, type SkipCounts } from './catch-up.js';
import { placeInWindow, type DeliveryWindow } from './delivery-window.js';
import type { Schedule } from './schedule.js';

export interface DueOccurrence {
  campaignId: string;
  schedule: Schedule;
  timezone: string;
  window: DeliveryWindow;
  /** the campaign's next_run_at */
  dueAt: Date;
  /** the scheduledAt of the campaign's previous scheduled run, if any */
  lastScheduledAt?: Date | null;
  /** what to do with occurrences reached late; the default when absent */
  catchUp?: CatchUp;
  /** the end of a backlog an earlier `all` catch-up accepted (campaigns.catch_up_through) */
  acceptedThrough?: Date | null;
}

/** Occurrences a plan passed over, for the campaign's skippedCount and the metric. */
export interface Skips {
  skipped: SkipCounts;
  lastSkippedAt: Date | null;
  /** the campaign's catch_up_through afterwards */
  acceptedThrough: Date | null;
}

export type OccurrencePlan =
  /** create a run scheduled at `scheduledAt` (never before its occurrence), then move the campaign to `next` */
  | ({ kind: 'run'; occurrence: Date; scheduledAt: Date; windowEndAt: Date | null; next: Date | null; coalesced: number } & Skips)
  /** the occurrence to run falls outside the delivery window: it moves to the window's next start, no run yet */
  | ({ kind: 'wait-for-window'; next: Date } & Skips)
  /** every due occurrence was skipped by the catch-up policy: no run; the campaign moves to `next` */
  | ({ kind: 'skipped'; next: Date | null } & Skips)
  /** an interval occurrence due less than everySeconds after the previous one (a concurrent edit
   * moved it): no run; it moves to the previous occurrence plus everySeconds */
  | { kind: 'too-early'; next: Date };

/**
 * What the scheduler does with one due occurrence. Pure: data and `now` in, decision out.
 * The campaign's catch-up policy (catch-up.ts) picks which of the occurrences due by now
 * becomes the run; it keeps its own time as scheduledAt. Jitter is deterministic per
 * (campaign, occurrence) and only ever delays. Never early: an interval occurrence due less
 * than everySeconds after the previous run's is moved, whatever wrote next_run_at (an edit
 * racing the tick must not cause an early run).
 */
export function planOccurrence(o: DueOccurrence, now: Date, jitterMaxMs: number): OccurrencePlan {
  if (o.schedule.type === 'interval' && o.lastScheduledAt) {
    // Jittered runs are up to jitterMaxMs off their grid point, so only a gap beyond that is early.
    const earliest = o.lastScheduledAt.getTime() + o.schedule.everySeconds * 1000 - jitterMaxMs;
    if (o.dueAt.getTime() < earliest) return { kind: 'too-early', next: new Date(earliest) };
  }
  // An occurrence outside the window moves to its opening before any lateness is judged.
  const dueJittered = new Date(o.dueAt.getTime() + occurrenceJitterMs(o.campaignId, o.dueAt, jitterMaxMs));
  const duePlaced = placeInWindow(dueJittered, o.window, o.timezone);
  if (duePlaced.startAt.getTime() > dueJittered.getTime()) {
    return { kind: 'wait-for-window', next: duePlaced.startAt, skipped: noSkips(), lastSkippedAt: null, acceptedThrough: o.acceptedThrough ?? null };
  }

  const d = planCatchUp(
    { schedule: o.schedule, timezone: o.timezone, catchUp: o.catchUp ?? DEFAULT_CATCH_UP, dueAt: o.dueAt, acceptedThrough: o.acceptedThrough ?? null },
    now,
  );
  const skips: Skips = { skipped: d.skipped, lastSkippedAt: d.lastSkippedAt, acceptedThrough: d.acceptedThrough };
  if (d.run === null) return { kind: 'skipped', next: d.next, ...skips };
  const jittered = new Date(d.run.getTime() + occurrenceJitterMs(o.campaignId, d.run, jitterMaxMs));
  const placed = placeInWindow(jittered, o.window, o.timezone);
  // The occurrence chosen (a later one than dueAt) lies after the window closed.
  if (placed.startAt.getTime() > jittered.getTime()) return { kind: 'wait-for-window', next: placed.startAt, ...skips, acceptedThrough: null };
  return { kind: 'run', occurrence: d.run, scheduledAt: jittered, windowEndAt: placed.windowEndAt, next: d.next, coalesced: totalSkipped(d.skipped), ...skips };
}
