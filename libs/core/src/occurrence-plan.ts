import { occurrenceJitterMs } from './backoff.js';
import { placeInWindow, type DeliveryWindow } from './delivery-window.js';
import { nextOccurrence, type Schedule } from './schedule.js';

export interface DueOccurrence {
  campaignId: string;
  schedule: Schedule;
  timezone: string;
  window: DeliveryWindow;
  /** the campaign's next_run_at */
  dueAt: Date;
  /** the scheduledAt of the campaign's previous scheduled run, if any */
  lastScheduledAt?: Date | null;
}

export type OccurrencePlan =
  /** create a run scheduled at `scheduledAt` (never before dueAt), then move the campaign to `next` */
  | { kind: 'run'; scheduledAt: Date; windowEndAt: Date | null; next: Date | null; coalesced: number }
  /** due outside the delivery window: the occurrence moves to the window's next start, no run yet */
  | { kind: 'wait-for-window'; next: Date }
  /** an interval occurrence due less than everySeconds after the previous one (a concurrent edit
   * moved it): no run; it moves to the previous occurrence plus everySeconds */
  | { kind: 'too-early'; next: Date };

/**
 * What the scheduler does with one due occurrence. Pure: data and `now` in, decision out.
 * Jitter is deterministic per (campaign, occurrence) and only ever delays. Never early: an
 * interval occurrence due less than everySeconds after the previous run's is moved, whatever
 * wrote next_run_at (an edit racing the tick must not cause an early run).
 */
export function planOccurrence(o: DueOccurrence, now: Date, jitterMaxMs: number): OccurrencePlan {
  if (o.schedule.type === 'interval' && o.lastScheduledAt) {
    // Jittered runs are up to jitterMaxMs off their grid point, so only a gap beyond that is early.
    const earliest = o.lastScheduledAt.getTime() + o.schedule.everySeconds * 1000 - jitterMaxMs;
    if (o.dueAt.getTime() < earliest) return { kind: 'too-early', next: new Date(earliest) };
  }
  const jittered = new Date(o.dueAt.getTime() + occurrenceJitterMs(o.campaignId, o.dueAt, jitterMaxMs));
  const placed = placeInWindow(jittered, o.window, o.timezone);
  if (placed.startAt.getTime() > jittered.getTime()) return { kind: 'wait-for-window', next: placed.startAt };
  const { at, coalesced } = nextOccurrence(o.schedule, o.timezone, o.dueAt, now);
  return { kind: 'run', scheduledAt: jittered, windowEndAt: placed.windowEndAt, next: at, coalesced };
}
