import type { OccurrencePlan } from '@metronome/core';
import type { MessagePart, RunTrigger } from '../types.js';

/** One run to create: the occurrence of a campaign, with its parts snapshot and window. */
export interface NewRun {
  id: string;
  campaignId: string;
  tenantId: string;
  accountId: string;
  trigger: RunTrigger;
  parts: MessagePart[];
  scheduledAt: Date;
  windowEndAt: Date | null;
  jobId: string;
  /** run now that reaches every chat at once, not held by the per-chat interval (CONTRACT, run now) */
  ignoreInterval?: boolean;
}

/** The ids a new run takes: its own and its first job's (libs/queue runJobId(id, 0)). */
export interface RunIds {
  runId: string;
  jobId: string;
}

/** A decision for one due campaign, applied in one tick's transaction. */
export interface CampaignAdvance {
  id: string;
  nextRunAt: Date | null;
  active: boolean;
  /** occurrences passed over without a run, added to the campaign's skipped_count */
  skipped: number;
  lastSkippedAt: Date | null;
  catchUpThrough: Date | null;
}

/** A new campaign's first run, planned before the insert: its run and the campaign's move past it. */
export interface FirstRun {
  run: NewRun;
  advance: CampaignAdvance;
}

/** A plan that creates a run (libs/core planOccurrence). */
export type RunPlan = Extract<OccurrencePlan, { kind: 'run' }>;
