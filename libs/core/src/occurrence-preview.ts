import type { CatchUp } from './catch-up.js';
import type { DeliveryWindow } from './delivery-window.js';
import { planOccurrence } from './occurrence-plan.js';
import type { Schedule } from './schedule.js';

/** What the scheduler knows of a campaign when its next occurrence comes due. */
export interface PreviewCampaign {
  campaignId: string;
  schedule: Schedule;
  timezone: string;
  window: DeliveryWindow;
  /** the next occurrence not yet turned into a run (campaigns.next_run_at); null: none */
  nextRunAt: Date | null;
  /** the scheduledAt of its last scheduled run, if any */
  lastScheduledAt: Date | null;
  /** its catch-up policy (the default when absent) */
  catchUp?: CatchUp;
  /** campaigns.catch_up_through: the end of a backlog an `all` catch-up still runs */
  acceptedThrough?: Date | null;
}

/** One run the scheduler will create. */
export interface UpcomingOccurrence {
  /** the schedule's occurrence (before it is placed in the delivery window) */
  scheduledAt: Date;
  /** when its run may start: the occurrence itself inside the window, else the window's next opening */
  startsAt: Date;
  /** when that opening closes; null for a window that never closes */
  windowEndAt: Date | null;
}

/**
 * The next `count` runs the scheduler will create for a campaign, decided step by step by
 * planOccurrence exactly as its ticks decide them: an occurrence outside the window moves to
 * the window's opening (and, for an interval, the grid goes on from there), missed ones are
 * skipped or caught up by its catch-up policy, a once-campaign stops after its run. `jitterMaxMs` is the scheduler's
 * SCHEDULER_JITTER_MS; pass 0 to preview the occurrences as scheduled. An occurrence already due
 * (the next tick turns it into a run) comes first.
 */
export function upcomingOccurrences(c: PreviewCampaign, now: Date, count: number, jitterMaxMs = 0): UpcomingOccurrence[] {
  const out: UpcomingOccurrence[] = [];
  let due = c.nextRunAt;
  let last = c.lastScheduledAt;
  let accepted = c.acceptedThrough ?? null;
  // the occurrence a wait for the window moved, shown as the one its run stands for
  let moved: Date | null = null;
  // Each run takes at most three steps (moved to the window, moved for the interval, run).
  for (let step = 0; due && out.length < count && step < 3 * count + 3; step++) {
    // The tick that meets this occurrence runs at its due time, or now for one already due.
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
