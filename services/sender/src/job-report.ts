import type { CoolingReason, StillPending } from '@metronome/core';
import type { HealthWrite, RunProgress } from '@metronome/db';
import type { PaceHolds, StopReason } from './job-pace.js';
import type { AnswerTally } from './writes.js';

// What one job's lanes report to its end (shapes only).

/** What a job's end does to its account's health: cool it, write what changed, or nothing. */
export type HealthPlan =
  | { kind: 'cool'; until: number; reason: CoolingReason; ms: number; paceFactor: number }
  | { kind: 'write'; write: HealthWrite }
  | { kind: 'unchanged' };

/** What the lanes of one job did, for its end: the answers, the pace's holds, why they stopped, and the last write's reads. */
export interface LaneReport extends AnswerTally, PaceHolds {
  stop: StopReason | null;
  /** the run's counts read with the job's last write (null: not read) */
  progress: RunProgress | StillPending | null;
  health: HealthPlan | null;
  healthWritten: boolean;
  finished: boolean;
}
