import { accountAdvice } from './account-advice.js';
import { coolingWords, type CoolingSettings } from './cooling.js';
import { formatLocalTime, placeInWindow } from './delivery-window.js';
import type { Outcome } from './outcomes.js';
import { finishedStatus, isComplete, type FinishedStatus } from './run-state.js';
import type { RunCountsLike } from './types.js';

/**
 * How a sender job starts and ends, decided from what the job loaded and `now` (CONTRACT §4).
 * The sender applies the decision (repository calls, enqueue); nothing here does I/O.
 */

/** What the decisions read of a run (the sender's RunForSend fits it as it is). */
export interface JobRun {
  scheduledAt: Date;
  windowEndAt: Date | null;
  timezone: string;
  /** the campaign's current delivery window (HH:MM in `timezone`) */
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

/** What kept a run from finishing inside its window, opening the pause's summary. */
export type WindowCloseCause = { kind: 'cooling'; until: number; reason: string } | { kind: 'cap'; until: number };

/** The job hands the run to a new job due at `at` (ms), and ends with `outcome`. */
export interface ContinueAt {
  kind: 'continue';
  at: number;
  outcome: Outcome;
}

/** The window closed (or closes before the run can go on): the run pauses, or fails if it never sent. */
export interface CloseWindow {
  kind: 'close-window';
  because: WindowCloseCause | null;
  outcome: Outcome;
}

export type JobStart = { kind: 'go' } | ContinueAt | CloseWindow | { kind: 'pause'; reason: 'account_unavailable'; summary: string; outcome: Outcome };

export type JobEnd = ContinueAt | CloseWindow | { kind: 'finish'; status: FinishedStatus; summary: string | null; outcome: Outcome };

/** What the job's lanes reported (the sender's LaneReport fits it). */
export interface JobLaneReport {
  delivered: number;
  /** 'window' and 'drain' change the decision; other stops only end the lanes */
  stop: string | null;
  nextTokenAt: number;
  blockedUntil: number;
  capUntil: number;
}

/** A run's progress after the lanes. */
export interface JobProgress extends RunCountsLike {
  nextDueAt: Date | null;
}

/**
 * A run's progress after the lanes when targets are still pending: only when the next comes
 * due. The job's last statement counts the run's targets only once none is pending, since a
 * run with pending targets cannot finish and its counts are not needed to continue it
 * (counting all of them at the end of every job cost a 10,000-chat run 3 ms a job).
 */
export interface StillPending {
  stillPending: true;
  nextDueAt: Date;
}

/** True when `progress` holds the run's counts (none of its targets was pending). */
export function isCounted<P extends JobProgress>(progress: P | StillPending): progress is P {
  return !('stillPending' in progress);
}

/**
 * Before any send: a job that fires early waits for its run, a cooling account waits for the
 * cooling's end, an account that is not active pauses the run, a closed window closes it, and
 * a window not open yet or a platform's wait defer the job. Otherwise the job goes.
 * `retryMs` is the sender's lock retry: how long after a cooling's end the job looks again.
 */
export function decideJobStart(run: JobRun, now: number, retryMs: number): JobStart {
  // Never early: a job that fires before its run is due waits for it.
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

/**
 * How often the job of a run whose account is restricted (a cooling without an end, such as
 * `not_delivering`) looks again: its runs go on within this of a lift (a receipt, the operator).
 * Each look is one job that reads the run, nothing sent; at 60 s a lifted account's runs sat for
 * up to a minute.
 */
export const RESTRICTED_RECHECK_MS = 15_000;

/**
 * A cooling account sends nothing: its run continues when the cooling ends (the scheduler's
 * reconciler ends it then, and a job that comes a moment early looks again shortly), or pauses
 * now, saying so, when the delivery window closes first.
 */
function waitForCooling(run: JobRun, now: number, retryMs: number): JobStart {
  const cooling = run.account.cooling;
  // No end (restricted): the job looks again now and then, so a lift is seen without a new job.
  if (cooling && cooling.until === null) return { kind: 'continue', at: now + RESTRICTED_RECHECK_MS, outcome: 'deferred' };
  const until = cooling?.until?.getTime() ?? now;
  // past `until` the reconciler is about to end it: the job looks again a moment later
  const resumeAt = Math.max(until, now) + retryMs;
  if (run.windowEndAt && resumeAt >= run.windowEndAt.getTime()) {
    return { kind: 'close-window', because: { kind: 'cooling', until, reason: cooling?.reason ?? 'cooling' }, outcome: 'window-closed' };
  }
  return { kind: 'continue', at: resumeAt, outcome: 'deferred' };
}

/**
 * After the lanes, at `end`: a run with nothing left finishes; a closed window closes it; a
 * cooling or a cap that lasts past the window's end pauses it now, saying so; otherwise it
 * continues when the next send can happen, unless the window closes first. `coolUntil` is the
 * cooling this job began (null: none); `retryMs` is how soon a run with only in-flight
 * targets looks again.
 */
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
  // a job that delivered says so, even when its run pauses with the window
  const closed: Outcome = delivered ? 'sent' : 'window-closed';
  if (report.stop === 'window' || (windowEndAt !== null && end >= windowEndAt)) return { kind: 'close-window', because: null, outcome: closed };
  // A draining replica hands its run on at once, to whichever replica is still taking jobs.
  const pending = !isCounted(progress) || progress.pending > 0;
  const dueAt = report.stop === 'drain' ? end : pending ? (progress.nextDueAt?.getTime() ?? end) : end + retryMs;
  const nextAt = Math.max(end, dueAt, report.nextTokenAt, report.blockedUntil, cooled?.until ?? 0);
  // The account began cooling: its runs wait for the end, or pause now if the window closes first.
  if (cooled && windowEndAt !== null && cooled.until >= windowEndAt) {
    return { kind: 'close-window', because: { kind: 'cooling', until: cooled.until, reason: cooled.reason }, outcome: closed };
  }
  // A cap that frees a slot only after the window closes: the run pauses now, saying so.
  if (report.capUntil > 0 && windowEndAt !== null && report.capUntil >= windowEndAt) {
    return { kind: 'close-window', because: { kind: 'cap', until: report.capUntil }, outcome: closed };
  }
  return continueOrClose(windowEndAt, nextAt, delivered ? 'sent' : 'deferred');
}

/** Continues at `nextAt`, unless the window closes first: then the run pauses now instead of spinning. */
function continueOrClose(windowEndAt: number | null, nextAt: number, outcome: Outcome): ContinueAt | CloseWindow {
  if (windowEndAt !== null && nextAt >= windowEndAt) return { kind: 'close-window', because: null, outcome: 'window-closed' };
  return { kind: 'continue', at: nextAt, outcome };
}

/** The sentence that opens a window-closed summary when a cooling or a cap kept the run from finishing. */
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

/** A finished run's errorSummary when not every group was delivered. */
export function failureSummary(p: RunCountsLike): string {
  const parts = [`${p.sent} of ${p.total} groups delivered`];
  if (p.failed) parts.push(`${p.failed} failed`);
  if (p.unknown) parts.push(`${p.unknown} unknown (may or may not have arrived; retry-failed re-sends them)`);
  if (p.skipped) parts.push(`${p.skipped} skipped`);
  return `${parts.join(', ')}.`;
}
