import type { CatchUp } from './catch-up.js';
import type { DeliveryWindow } from './delivery-window.js';
import { planOccurrence } from './occurrence-plan.js';
import type { Schedule } from './schedule.js';

export interface PreviewCampaign {
  campaignId: string;
  schedule: Schedule;
  timezone: string;
  window: DeliveryWindow;
  /** campaigns.next_run_at; null: none */
  nextRunAt: Date | null;
  lastScheduledAt: Date | null;
  catchUp?: CatchUp;
  acceptedThrough?: Date | null;
}

export interface UpcomingOccurrence {
  /** the occurrence, before it is placed in the delivery window */
  scheduledAt: Date;
  startsAt: Date;
  windowEndAt: Date | null;
}

/** The next `count` runs the scheduler will create, decided by planOccurrence as its ticks decide them (`jitterMaxMs` 0: as scheduled). */
export function upcomingOccurrences(c: PreviewCampaign, now: Date, count: number, jitterMaxMs = 0): UpcomingOccurrence[] {
  const out: UpcomingOccurrence[] = [];
  let due = c.nextRunAt;
  let last = c.lastScheduledAt;
  let accepted = c.acceptedThrough ?? null;
  let moved: Date | null = null;
  // each run takes at most three steps: moved to the window, moved for the interval, run
  for (let step = 0; due && out.length < count && step < 3 * count + 3; step++) {
    const tick = new Date(Math.max(due.getTime(), now.getTime()));
    const plan = planOccurrence(
      {
        campaignId: c.campaignId,
        schedule: c.schedule,
        timezone: c.timezone,
        window: c.window,
        dueAt: due,
        lastScheduledAt: last,
        catchUp: c.catchUp,
        acceptedThrough: accepted,
      },
      tick,
      jitterMaxMs,
    );
    if (plan.kind === 'wait-for-window') moved ??= due;
    if (plan.kind !== 'too-early') accepted = plan.acceptedThrough;
    if (plan.kind !== 'run') {
      due = plan.next;
      continue;
    }
    out.push({ scheduledAt: moved ?? plan.occurrence, startsAt: plan.scheduledAt, windowEndAt: plan.windowEndAt });
    moved = null;
    last = plan.scheduledAt;
    due = plan.next;
  }
  return out;
}
