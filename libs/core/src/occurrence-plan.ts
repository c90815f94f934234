import { occurrenceJitterMs } from './backoff.js';
import { DEFAULT_CATCH_UP, noSkips, planCatchUp, totalSkipped, type CatchUp, type SkipCounts } from './catch-up.js';
import { placeInWindow, type DeliveryWindow } from './delivery-window.js';
import type { Schedule } from './schedule.js';

export interface DueOccurrence {
  campaignId: string;
  schedule: Schedule;
  timezone: string;
  window: DeliveryWindow;
  dueAt: Date;
  lastScheduledAt?: Date | null;
  catchUp?: CatchUp;
  /** campaigns.catch_up_through: the end of a backlog an earlier `all` catch-up accepted */
  acceptedThrough?: Date | null;
}

export interface Skips {
  skipped: SkipCounts;
  lastSkippedAt: Date | null;
  acceptedThrough: Date | null;
}

export type OccurrencePlan =
  | ({ kind: 'run'; occurrence: Date; scheduledAt: Date; windowEndAt: Date | null; next: Date | null; coalesced: number } & Skips)
  | ({ kind: 'wait-for-window'; next: Date } & Skips)
  | ({ kind: 'skipped'; next: Date | null } & Skips)
  /** an interval occurrence due less than everySeconds after the previous (a concurrent edit moved it): no run */
  | { kind: 'too-early'; next: Date };

/** What the scheduler does with one due occurrence; jitter is deterministic and only delays, and an edit racing the tick never brings a run early. */
export function planOccurrence(o: DueOccurrence, now: Date, jitterMaxMs: number): OccurrencePlan {
  if (o.schedule.type === 'interval' && o.lastScheduledAt) {
    // Jittered runs are up to jitterMaxMs off their grid point, so only a gap beyond that is early.
    const earliest = o.lastScheduledAt.getTime() + o.schedule.everySeconds * 1000 - jitterMaxMs;
    if (o.dueAt.getTime() < earliest) return { kind: 'too-early', next: new Date(earliest) };
  }
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
  if (placed.startAt.getTime() > jittered.getTime()) return { kind: 'wait-for-window', next: placed.startAt, ...skips, acceptedThrough: null };
  return { kind: 'run', occurrence: d.run, scheduledAt: jittered, windowEndAt: placed.windowEndAt, next: d.next, coalesced: totalSkipped(d.skipped), ...skips };
}
