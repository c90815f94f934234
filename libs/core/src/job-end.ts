import { accountAdvice } from './account-advice.js';
import { coolingWords, type CoolingSettings } from './cooling.js';
import { formatLocalTime, placeInWindow } from './delivery-window.js';
import type { Outcome } from './outcomes.js';
import { finishedStatus, isComplete, type FinishedStatus } from './run-state.js';
import type { RunCountsLike } from './types.js';

/** How a sender job starts and ends, decided from what the job loaded and `now` (CONTRACT §4); the sender applies the decision, nothing here does I/O. */

export interface JobRun {
  scheduledAt: Date;
  windowEndAt: Date | null;
  timezone: string;
  windowStart: string;
  windowEnd: string;
  account: {
    id: string;
    platform: string;
    status: string;
    blockedUntil: Date | null;
    /** `until` null: no end (a restriction, `restricted`), only an operator's lift ends it */
    cooling: { until: Date | null; reason: string } | null;
  };
}

export type WindowCloseCause = { kind: 'cooling'; until: number; reason: string } | { kind: 'cap'; until: number };

export interface ContinueAt {
  kind: 'continue';
  at: number;
  outcome: Outcome;
}

export interface CloseWindow {
  kind: 'close-window';
  because: WindowCloseCause | null;
  outcome: Outcome;
}

export type JobStart = { kind: 'go' } | ContinueAt | CloseWindow | { kind: 'pause'; reason: 'account_unavailable'; summary: string; outcome: Outcome };

export type JobEnd = ContinueAt | CloseWindow | { kind: 'finish'; status: FinishedStatus; summary: string | null; outcome: Outcome };

export interface JobLaneReport {
  delivered: number;
  /** 'window' and 'drain' change the decision; other stops only end the lanes */
  stop: string | null;
  nextTokenAt: number;
  blockedUntil: number;
  capUntil: number;
}

export interface JobProgress extends RunCountsLike {
  nextDueAt: Date | null;
}

/** Progress while targets are pending: the run's targets are counted only once none is, since a pending run cannot finish. */
export interface StillPending {
  stillPending: true;
  nextDueAt: Date;
}

export function isCounted<P extends JobProgress>(progress: P | StillPending): progress is P {
  return !('stillPending' in progress);
}

/** Before any send: wait for the run's time or a cooling's end, pause on an inactive account, close on a shut window, defer on a wait. */
export function decideJobStart(run: JobRun, now: number, retryMs: number): JobStart {
  if (run.scheduledAt.getTime() > now) return { kind: 'continue', at: run.scheduledAt.getTime(), outcome: 'deferred' };
  if (run.account.status === 'cooling') return waitForCooling(run, now, retryMs);
  if (run.account.status !== 'active') {
    const summary = accountAdvice(run.account.platform, run.account.id, run.account.status);
    return { kind: 'pause', reason: 'account_unavailable', summary, outcome: 'no-account' };
  }
  const windowEndAt = run.windowEndAt?.getTime() ?? null;
  if (windowEndAt !== null && now >= windowEndAt) return { kind: 'close-window', because: null, outcome: 'window-closed' };
  // A run resumed (or re-enqueued) while its window is shut waits for the next opening.
  const opensAt = placeInWindow(new Date(now), { start: run.windowStart, end: run.windowEnd }, run.timezone).startAt.getTime();
  if (opensAt > now) return continueOrClose(windowEndAt, opensAt, 'deferred');
  const blockedUntil = run.account.blockedUntil?.getTime() ?? 0;
  if (blockedUntil > now) return continueOrClose(windowEndAt, blockedUntil, 'deferred');
  return { kind: 'go' };
}

/** How often a job of a restricted account (a cooling without an end) looks again, so a lift is seen without a new job. */
export const RESTRICTED_RECHECK_MS = 15_000;

function waitForCooling(run: JobRun, now: number, retryMs: number): JobStart {
  const cooling = run.account.cooling;
  if (cooling && cooling.until === null) return { kind: 'continue', at: now + RESTRICTED_RECHECK_MS, outcome: 'deferred' };
  const until = cooling?.until?.getTime() ?? now;
  const resumeAt = Math.max(until, now) + retryMs;
  if (run.windowEndAt && resumeAt >= run.windowEndAt.getTime()) {
    return { kind: 'close-window', because: { kind: 'cooling', until, reason: cooling?.reason ?? 'cooling' }, outcome: 'window-closed' };
  }
  return { kind: 'continue', at: resumeAt, outcome: 'deferred' };
}

/** After the lanes: finish, close, pause now on a cooling or cap that outlasts the window, or continue when the next send can go. */
export function decideJobEnd(
  progress: JobProgress | StillPending,
  report: JobLaneReport,
  run: Pick<JobRun, 'windowEndAt'>,
  cooled: { until: number; reason: string } | null,
  end: number,
  retryMs: number,
): JobEnd {
  const delivered = report.delivered > 0;
  if (isCounted(progress) && isComplete(progress)) {
    const status = finishedStatus(progress);
    const outcome: Outcome = delivered ? 'sent' : status === 'failed' ? 'failed' : 'sent';
    return { kind: 'finish', status, summary: status === 'success' ? null : failureSummary(progress), outcome };
  }
  const windowEndAt = run.windowEndAt?.getTime() ?? null;
  const closed: Outcome = delivered ? 'sent' : 'window-closed';
  if (report.stop === 'window' || (windowEndAt !== null && end >= windowEndAt)) return { kind: 'close-window', because: null, outcome: closed };
  const pending = !isCounted(progress) || progress.pending > 0;
  const dueAt = report.stop === 'drain' ? end : pending ? (progress.nextDueAt?.getTime() ?? end) : end + retryMs;
  const nextAt = Math.max(end, dueAt, report.nextTokenAt, report.blockedUntil, cooled?.until ?? 0);
  if (cooled && windowEndAt !== null && cooled.until >= windowEndAt) {
    return { kind: 'close-window', because: { kind: 'cooling', until: cooled.until, reason: cooled.reason }, outcome: closed };
  }
  if (report.capUntil > 0 && windowEndAt !== null && report.capUntil >= windowEndAt) {
    return { kind: 'close-window', because: { kind: 'cap', until: report.capUntil }, outcome: closed };
  }
  return continueOrClose(windowEndAt, nextAt, delivered ? 'sent' : 'deferred');
}

function continueOrClose(windowEndAt: number | null, nextAt: number, outcome: Outcome): ContinueAt | CloseWindow {
  if (windowEndAt !== null && nextAt >= windowEndAt) return { kind: 'close-window', because: null, outcome: 'window-closed' };
  return { kind: 'continue', at: nextAt, outcome };
}

export function windowCloseCauseSentence(
  cause: WindowCloseCause,
  timezone: string,
  cooling: Pick<CoolingSettings, 'floodWaitsPerHour' | 'failureShare' | 'failureWindow'>,
): string {
  const at = formatLocalTime(new Date(cause.until), timezone);
  if (cause.kind === 'cooling')
    return `The account is cooling until ${at} (${timezone}): ${coolingWords(cause.reason, cooling)}, after the delivery window closes.`;
  return `The account's hourly or daily cap is met until ${at} (${timezone}), after the delivery window closes.`;
}

export function failureSummary(p: RunCountsLike): string {
  const parts = [`${p.sent} of ${p.total} groups delivered`];
  if (p.failed) parts.push(`${p.failed} failed`);
  if (p.unknown) parts.push(`${p.unknown} unknown (may or may not have arrived; retry-failed re-sends them)`);
  if (p.skipped) parts.push(`${p.skipped} skipped`);
  return `${parts.join(', ')}.`;
}
