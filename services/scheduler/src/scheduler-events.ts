import type { Outcome, SkipCounts } from '@metronome/core';
import { EventBus } from '@metronome/observability';

/** One scheduler decision about a campaign (a run created, held, skipped, set aside…); `reason` is its log line. */
export interface ScheduleDecision {
  campaignId: string;
  runId?: string | undefined;
  outcome: Outcome;
  reason: string;
  dueAt?: Date | undefined;
  scheduledAt?: Date | undefined;
  next?: Date | null | undefined;
  coalesced?: number | undefined;
  skipped?: SkipCounts | undefined;
  streak?: number | undefined;
}

/** What the scheduler reports, by name; metrics-subscriber.ts and log-subscriber.ts turn it into CONTRACT §6's series and the log. */
export interface SchedulerEventMap {
  /** A batched statement failed on its data: the tick is redone, rows at fault set aside. */
  'tick:redo': { error: unknown };
  /** A committed tick's decision; `at`: when its runs were created (schedule lag). */
  'schedule:decision': { decision: ScheduleDecision; at: number };
  'tick:counts': { repeatedNoAccount: number; coalesced: number; skipped: SkipCounts; autoResumed: number; autoPaused: number };
  /** A leading tick ended, after `wallMs` and `cpuMs` of this process's CPU. */
  'tick:timed': { wallMs: number; cpuMs: number };
  'tick:woken': Record<string, never>;
  'run:requeued': { runId: string; jobSeq: number };
  'account:cooling-ended': { accountId: string; platform: string };
  'account:not-delivering': { accountId: string; platform: string; sends: number };
  'reconcile:done': { requeued: number; expiredLeases: number; expiredPaused: number };
  'leader:gained': { fence: number; holder: string };
  'leader:lost': Record<string, never>;
  'leader:lapsed': { state: string };
}

export type SchedulerEvents = EventBus<SchedulerEventMap>;

export function schedulerEvents(): SchedulerEvents {
  return new EventBus<SchedulerEventMap>();
}
