import { FINISHED_RUN_STATUSES, LIVE_RUN_STATUSES, OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type RawBuilder } from 'kysely';
import type { PausedReason } from '../types.js';
import { nextJobStep } from './next-job-step.js';
import { statusList } from './status-sql.js';

// Every change of a run's status, written once: the statuses it may start from (`from`) and the columns
// it sets (`set`), with `runs` aliased `r`. No other file writes runs.status (run-status.test.ts).

export interface RunStatusChange {
  set: RawBuilder<unknown>;
  from: RawBuilder<unknown>;
}

const fromOpen = sql`r.status in (${statusList(OPEN_RUN_STATUSES)})`;
const fromLive = sql`r.status in (${statusList(LIVE_RUN_STATUSES)})`;
const fromFinished = sql`r.status in (${statusList(FINISHED_RUN_STATUSES)})`;
const fromPaused = sql.raw(`r.status = 'paused'`);

/** queued | running → running (started_at kept from the first start); `now` may be a column. */
export function startRun(now: Date | RawBuilder<unknown>): RunStatusChange {
  return { set: sql`status = 'running', started_at = coalesce(started_at, ${now}), updated_at = ${now}`, from: fromOpen };
}

/** queued | running → success, partial or failed, with the run's summary. */
export function finishRun(status: 'success' | 'partial' | 'failed', summary: string | null, now: Date): RunStatusChange {
  return { set: sql`status = ${status}, finished_at = ${now}, error_summary = ${summary}, paused_reason = null, updated_at = ${now}`, from: fromOpen };
}

/** queued | running → paused, with its reason; `summary` undefined keeps the run's summary. */
export function pauseRun(reason: PausedReason, summary: string | null | undefined, now: Date): RunStatusChange {
  const set =
    summary === undefined
      ? sql`status = 'paused', paused_reason = ${reason}, updated_at = ${now}`
      : sql`status = 'paused', paused_reason = ${reason}, error_summary = ${summary}, updated_at = ${now}`;
  return { set, from: fromOpen };
}

/** queued | running | paused → cancelled; the caller skips its pending targets. */
export function cancelRun(now: Date): RunStatusChange {
  return { set: sql`status = 'cancelled', finished_at = ${now}, updated_at = ${now}`, from: fromLive };
}

/** paused → cancelled after PAUSED_RUN_TTL; the caller skips its pending targets. */
export function expirePausedRun(now: Date): RunStatusChange {
  return {
    set: sql`status = 'cancelled', finished_at = ${now}, error_summary = 'Paused too long: cancelled after PAUSED_RUN_TTL.', updated_at = ${now}`,
    from: fromPaused,
  };
}

/** paused → queued at its next job step, with its window's end. */
export function resumeRun(windowEndAt: RawBuilder<unknown> | Date | null, now: Date): RunStatusChange {
  return {
    set: sql`status = 'queued', paused_reason = null, error_summary = null, window_end_at = ${windowEndAt}, ${nextJobStep('r')}, updated_at = ${now}`,
    from: fromPaused,
  };
}

/** finished → queued at its next job step; the caller puts the failed and unknown targets back. */
export function retryRun(windowEndAt: Date | null, now: Date): RunStatusChange {
  return {
    set: sql`status = 'queued', finished_at = null, paused_reason = null, error_summary = null, window_end_at = ${windowEndAt}, ${nextJobStep('r')}, updated_at = ${now}`,
    from: fromFinished,
  };
}

/** success → partial: a platform refused, late, a message it had taken. */
export function demoteRun(now: Date): RunStatusChange {
  return { set: sql`status = 'partial', updated_at = ${now}`, from: sql.raw(`r.status = 'success'`) };
}
