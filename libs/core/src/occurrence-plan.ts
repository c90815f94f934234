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
}

export type OccurrencePlan =
  /** create a run scheduled at `scheduledAt` (never before dueAt), then move the campaign to `next` */
  | { kind: 'run'; scheduledAt: Date; windowEndAt: Date | null; next: Date | null; coalesced: number }
  /** due outside the delivery window: the occurrence moves to the window's next start, no run yet */
  | { kind: 'wait-for-window'; next: Date };

/**
 * What the scheduler does with one due occurrence. Pure: data and `now` in, decision out.
 * Jitter is deterministic per (campaign, occurrence) and only ever delays.
 */
export function planOccurrence(o: DueOccurrence, now: Date, jitterMaxMs: number): OccurrencePlan {
  const jittered = new Date(o.dueAt.getTime() + occurrenceJitterMs(o.campaignId, o.dueAt, jitterMaxMs));
  const placed = placeInWindow(jittered, o.window, o.timezone);
  if (placed.startAt.getTime() > jittered.getTime()) return { kind: 'wait-for-window', next: placed.startAt };
  const { at, coalesced } = nextOccurrence(o.schedule, o.timezone, o.dueAt, now);
  return { kind: 'run', scheduledAt: jittered, windowEndAt: placed.windowEndAt, next: at, coalesced };
}
