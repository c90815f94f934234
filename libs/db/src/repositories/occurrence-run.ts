import { planOccurrence, totalSkipped, type DueOccurrence, type OccurrencePlan } from '@metronome/core';
import {
  CampaignProblem,
  deliveryWindowProblem,
  ensure,
  evaluationProblem,
  messagesProblem,
  planProblem,
  scheduleProblem,
  timeProblem,
  timezoneProblem,
} from '../campaign-check.js';
import type { DueCampaign } from './due-campaigns.js';
import type { CampaignAdvance, NewRun, RunPlan } from './run-shapes.js';

export type { RunPlan } from './run-shapes.js';

/** A due campaign as libs/core's planOccurrence reads it. */
export function dueOccurrence(c: DueCampaign): DueOccurrence {
  return {
    campaignId: c.id,
    schedule: c.schedule,
    timezone: c.timezone,
    window: { start: c.windowStart, end: c.windowEnd },
    dueAt: c.nextRunAt,
    lastScheduledAt: c.lastScheduledAt,
    catchUp: { policy: c.catchUpPolicy, maxLatenessSeconds: c.catchUpMaxLatenessSeconds },
    acceptedThrough: c.catchUpThrough,
  };
}

/**
 * The checked plan of a due campaign's occurrence: the tick's and the instant start's one way to plan.
 * Throws a CampaignProblem for a campaign that cannot become a run.
 */
export function planDue(c: DueCampaign, now: Date, jitterMs: number): OccurrencePlan {
  try {
    ensure(
      timeProblem('its due time', c.nextRunAt) ??
        scheduleProblem(c.schedule) ??
        timezoneProblem(c.timezone) ??
        deliveryWindowProblem(c.windowStart, c.windowEnd) ??
        messagesProblem(c.messages),
    );
    const plan = planOccurrence(dueOccurrence(c), now, jitterMs);
    ensure(planProblem(plan));
    return plan;
  } catch (error) {
    throw error instanceof CampaignProblem ? error : new CampaignProblem(evaluationProblem(error));
  }
}

/** What a run plan writes: the run (trigger `schedule`) and the campaign's move to its next occurrence; a once-campaign that has run becomes inactive. */
export function occurrenceRun(c: DueCampaign, plan: RunPlan, id: string, jobId: string): { run: NewRun; advance: CampaignAdvance } {
  return {
    run: {
      id,
      campaignId: c.id,
      tenantId: c.tenantId,
      accountId: c.accountId,
      trigger: 'schedule',
      parts: c.messages,
      scheduledAt: plan.scheduledAt,
      windowEndAt: plan.windowEndAt,
      jobId,
    },
    advance: {
      id: c.id,
      nextRunAt: plan.next,
      active: plan.next !== null || c.schedule.type !== 'once',
      skipped: totalSkipped(plan.skipped),
      lastSkippedAt: plan.lastSkippedAt,
      catchUpThrough: plan.acceptedThrough,
    },
  };
}
