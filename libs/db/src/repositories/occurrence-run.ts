import { totalSkipped, type DueOccurrence, type OccurrencePlan } from '@metronome/core';
import type { NewRun } from './run-creation.js';
import type { CampaignAdvance, DueCampaign } from './tick-transaction.js';

/** A plan that creates a run (libs/core planOccurrence). */
export type RunPlan = Extract<OccurrencePlan, { kind: 'run' }>;

/**
 * A due campaign as libs/core's planOccurrence reads it. The one mapping for the scheduler's
 * tick and the API's instant start, so both plan an occurrence from the same facts.
 */
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
 * What a plan that creates a run writes: the run (trigger `schedule`, the campaign's messages,
 * the plan's times) and the campaign's move to its next occurrence, with the occurrences the
 * plan passed over. A once-campaign that has run becomes inactive.
 */
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
