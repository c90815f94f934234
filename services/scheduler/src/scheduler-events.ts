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

/**
 * What the scheduler reports, by name. The tick, the reconciler and the leadership emit these;
 * the metrics subscriber (metrics-subscriber.ts) and the log subscriber (log-subscriber.ts)
 * turn them into the series of CONTRACT §6 and the log lines operators read.
 */
export interface SchedulerEventMap {
  /** A batched statement of the tick failed on its data: the tick is done again, rows at fault set aside. */
  'tick:redo': { error: unknown };
  /** A decision of a committed tick; `at` is when its runs were created (for the schedule lag). */
  'schedule:decision': { decision: ScheduleDecision; at: number };
  /** A committed tick's counts beyond its decisions. */
  'tick:counts': { repeatedNoAccount: number; coalesced: number; skipped: SkipCounts; autoResumed: number; autoPaused: number };
  /** A leading tick ended (reconciling or not), after `wallMs` and `cpuMs` of this process's CPU. */
  'tick:timed': { wallMs: number; cpuMs: number };
  /** A nudge from the API brought a tick forward. */
  'tick:woken': Record<string, never>;
  /** A run had no live job in Redis and got a new one. */
  'run:requeued': { runId: string; jobSeq: number };
  /** An account's automatic cooling ended. */
  'account:cooling-ended': { accountId: string; platform: string };
  /** An account's sends got no delivery receipt: set cooling, reason not_delivering. */
  'account:not-delivering': { accountId: string; platform: string; sends: number };
  /** A reconciler pass's repairs. */
  'reconcile:done': { requeued: number; expiredLeases: number; expiredPaused: number };
  /** This replica took the lead, with its fencing token. */
  'leader:gained': { fence: number; holder: string };
  /** Another replica holds the lease now. */
  'leader:lost': Record<string, never>;
  /** The lease lapsed between ticks (renewal found it `state`). */
  'leader:lapsed': { state: string };
}

/** The scheduler's event bus. */
export type SchedulerEvents = EventBus<SchedulerEventMap>;

export function schedulerEvents(): SchedulerEvents {
  return new EventBus<SchedulerEventMap>();
}
