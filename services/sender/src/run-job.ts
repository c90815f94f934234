import {
  accountAdvice,
  finishedStatus,
  formatLocalTime,
  isComplete,
  open,
  placeInWindow,
  statusAtWindowClose,
  windowClosedSummary,
  type Outcome,
} from '@metronome/core';
import type { RunForSend, RunProgress } from '@metronome/db';
import { runJobId } from '@metronome/queue';
import type { TransportAccount } from '@metronome/transports';
import type { SenderDeps } from './deps.js';
import { accountPerMinute, coolingSentence, recordHealth } from './account-health.js';
import { runLanes } from './send-lanes.js';

export interface RunJobInput {
  jobId: string;
  runId: string;
}

/**
 * One sender job: advance one run by at most SENDS_PER_JOB sends under its account's lock,
 * then finish it, pause it, or hand it to a continuation job due exactly when the next send
 * can happen. Returns the job's one outcome (CONTRACT §4).
 */
export async function processRunJob(deps: SenderDeps, job: RunJobInput): Promise<Outcome> {
  // Targets due within the longest inline wait are this job's too: a run whose chats come due a
  // few ms apart (each held by its own per-chat interval) is sent by one job, not one job a chat.
  const run = await deps.repo.loadRun(job.runId, new Date(deps.clock.now() + deps.settings.maxInlineWaitMs), deps.settings.sendsPerJob);
  if (!run) return 'inactive-campaign';
  // A job that no longer carries the run (superseded by a resume, a retry or a continuation) does nothing.
  if (run.jobId !== job.jobId) return 'stale-message';
  if (run.status !== 'queued' && run.status !== 'running') return 'inactive-campaign';

  const now = deps.clock.now();
  // Never early: a job that fires before its run is due waits for it.
  if (run.scheduledAt.getTime() > now) return continueLater(deps, run, job.jobId, run.scheduledAt.getTime() - now, 'deferred');
  if (run.account.status === 'cooling') return waitForCooling(deps, run, job.jobId, now);
  if (run.account.status !== 'active') {
    await deps.repo.pause(run.runId, 'account_unavailable', accountAdvice(run.account.platform, run.account.id, run.account.status), new Date(now));
    return 'no-account';
  }
  if (run.windowEndAt && now >= run.windowEndAt.getTime()) return closeWindow(deps, run, await deps.repo.progress(run.runId));
  // A run resumed (or re-enqueued) while its window is shut waits for the next opening.
  const opensAt = placeInWindow(new Date(now), { start: run.windowStart, end: run.windowEnd }, run.timezone).startAt.getTime();
  if (opensAt > now) return continueOrClose(deps, run, job.jobId, opensAt, 'deferred');
  const blockedUntil = run.account.blockedUntil?.getTime() ?? 0;
  if (blockedUntil > now) return continueOrClose(deps, run, job.jobId, blockedUntil, 'deferred');

  const transport = deps.transports[run.account.platform];
  if (!transport) {
    deps.logger.error({ runId: run.runId, platform: run.account.platform }, 'no transport configured for this platform');
    await deps.repo.pause(run.runId, 'account_unavailable', `This deployment has no ${run.account.platform} transport.`, new Date(now));
    return 'no-account';
  }

  const readiness = await transport.readiness?.(run.account.id);
  if (readiness && !readiness.ready) {
    deps.logger.debug({ runId: run.runId, accountId: run.account.id, reason: readiness.reason }, 'account left to another replica for now');
    return continueLater(deps, run, job.jobId, readiness.retryAfterMs * (1 + deps.random() * 0.5), 'lock-busy');
  }
  const lock = await deps.lock.acquire(run.account.id, deps.settings.lockTtlMs);
  if (!lock.held) {
    const delay = deps.settings.lockRetryMs * (1 + deps.random() * 0.5);
    return continueLater(deps, run, job.jobId, delay, 'lock-busy');
  }
  const renew = setInterval(() => {
    deps.lock.extend(run.account.id, lock.token, deps.settings.lockTtlMs).catch(() => undefined);
  }, Math.max(100, Math.floor(deps.settings.lockTtlMs / 3)));
  try {
    // A continuation finds its run already running: skip the write (claims re-check the status).
    if (run.status === 'queued' && !(await deps.repo.markRunning(run.runId, new Date(deps.clock.now())))) return 'inactive-campaign';
    const account = transportAccount(deps, run);
    const lanes = run.account.groupConcurrency ?? deps.settings.defaultGroupConcurrency;
    const report = await runLanes(deps, run, account, transport, lock.token, lanes);
    if (report.stop === 'account-unavailable') return 'no-account';
    const cooled = await recordHealth(deps, run, report).catch((error: unknown) => {
      deps.logger.warn({ err: error, accountId: run.account.id }, "account's health not recorded: this job's sends are left out of automatic cooling");
      return null;
    });
    const coolUntil = cooled?.until ?? 0;

    const progress = await deps.repo.progress(run.runId);
    const end = deps.clock.now();
    const moved: Outcome = report.delivered > 0 ? 'sent' : 'deferred';
    if (isComplete(progress)) {
      const status = finishedStatus(progress);
      await deps.repo.finish(run.runId, status, status === 'success' ? null : failureSummary(progress), new Date(end));
      return report.delivered > 0 ? 'sent' : status === 'failed' ? 'failed' : 'sent';
    }
    if (report.stop === 'window' || (run.windowEndAt && end >= run.windowEndAt.getTime())) {
      const outcome = await closeWindow(deps, run, progress);
      return report.delivered > 0 ? 'sent' : outcome;
    }
    // A draining replica hands its run on at once, to whichever replica is still taking jobs.
    const dueAt = report.stop === 'drain' ? end : progress.pending > 0 ? (progress.nextDueAt?.getTime() ?? end) : end + deps.settings.lockRetryMs;
    const nextAt = Math.max(end, dueAt, report.nextTokenAt, report.blockedUntil, coolUntil);
    // The account began cooling: its runs wait for the end, or pause now if the window closes first.
    if (cooled && run.windowEndAt && cooled.until >= run.windowEndAt.getTime()) {
      const outcome = await closeWindow(deps, run, progress, `${coolingSentence(deps, run, cooled.until, cooled.reason)}, after the delivery window closes.`);
      return report.delivered > 0 ? 'sent' : outcome;
    }
    // A cap that frees a slot only after the window closes: the run pauses now, saying so.
    if (report.capUntil > 0 && run.windowEndAt && report.capUntil >= run.windowEndAt.getTime()) {
      const frees = formatLocalTime(new Date(report.capUntil), run.timezone);
      const outcome = await closeWindow(deps, run, progress, `The account's hourly or daily cap is met until ${frees} (${run.timezone}), after the delivery window closes.`);
      return report.delivered > 0 ? 'sent' : outcome;
    }
    return continueOrClose(deps, run, job.jobId, nextAt, moved);
  } finally {
    clearInterval(renew);
    await deps.lock.release(run.account.id, lock.token).catch(() => undefined);
  }
}

/**
 * A cooling account sends nothing: its run continues when the cooling ends (the scheduler's
 * reconciler ends it then, and a job that comes a moment early looks again shortly), or pauses
 * now, saying so, when the delivery window closes first.
 */
async function waitForCooling(deps: SenderDeps, run: RunForSend, jobId: string, now: number): Promise<Outcome> {
  const cooling = run.account.cooling;
  const until = cooling?.until.getTime() ?? now;
  // past `until` the reconciler is about to end it: the job looks again a moment later
  const resumeAt = Math.max(until, now) + deps.settings.lockRetryMs;
  if (run.windowEndAt && resumeAt >= run.windowEndAt.getTime()) {
    return closeWindow(deps, run, await deps.repo.progress(run.runId), `${coolingSentence(deps, run, until, cooling?.reason ?? 'cooling')}, after the delivery window closes.`);
  }
  return continueLater(deps, run, jobId, resumeAt - now, 'deferred');
}

function transportAccount(deps: SenderDeps, run: RunForSend): TransportAccount {
  const credentials = run.account.credentials ? (JSON.parse(open(run.account.credentials, deps.secretsKeys).toString('utf8')) as Record<string, unknown>) : null;
  return { id: run.account.id, externalId: run.account.externalId, credentials };
}

/** Continues at `nextAt`, unless the window closes first: then the run pauses now instead of spinning. */
async function continueOrClose(deps: SenderDeps, run: RunForSend, jobId: string, nextAt: number, outcome: Outcome): Promise<Outcome> {
  if (run.windowEndAt && nextAt >= run.windowEndAt.getTime()) return closeWindow(deps, run, await deps.repo.progress(run.runId));
  return continueLater(deps, run, jobId, nextAt - deps.clock.now(), outcome);
}

/**
 * Hands the run to a new job delayed by `delayMs`. The hand-over is a compare-and-set on the
 * run's job id, so only the job that carries the run can continue it.
 */
async function continueLater(deps: SenderDeps, run: RunForSend, jobId: string, delayMs: number, outcome: Outcome): Promise<Outcome> {
  const seq = run.jobSeq + 1;
  const nextJobId = runJobId(run.runId, seq);
  if (!(await deps.repo.passToNextJob(run.runId, jobId, seq, nextJobId, new Date(deps.clock.now())))) return 'stale-message';
  // If this enqueue is lost (Redis down), the scheduler's reconciler re-adds the job by its id.
  await deps.queue.enqueue(run.runId, seq, Math.max(0, delayMs));
  return outcome;
}

/**
 * The window closed with targets pending: the run pauses (resumable), or fails if it never sent.
 * `because`, when given, opens the summary (what kept the run from finishing in the window).
 */
async function closeWindow(deps: SenderDeps, run: RunForSend, progress: RunProgress, because?: string): Promise<Outcome> {
  const now = new Date(deps.clock.now());
  const closedAt = formatLocalTime(run.windowEndAt ?? now, run.timezone);
  const summary = windowClosedSummary(progress, closedAt, run.timezone, {
    perMinute: accountPerMinute(deps, run, now.getTime()),
    partsPerChat: run.parts.length,
    scheduledAt: run.scheduledAt,
    firstSendAt: run.firstSendAt,
    window: { start: run.windowStart, end: run.windowEnd },
    windowEndAt: run.windowEndAt ?? now,
  });
  const prefix = because ? `${because} ` : '';
  if (statusAtWindowClose(progress, progress.anyAttempt) === 'paused') await deps.repo.pause(run.runId, 'window_closed', prefix + summary, now);
  else await deps.repo.failBeforeFirstSend(run.runId, `${prefix}Delivery window closed at ${closedAt} (${run.timezone}) before the first send.`, now);
  return 'window-closed';
}

function failureSummary(p: RunProgress): string {
  const parts = [`${p.sent} of ${p.total} groups delivered`];
  if (p.failed) parts.push(`${p.failed} failed`);
  if (p.unknown) parts.push(`${p.unknown} unknown (may or may not have arrived; retry-failed re-sends them)`);
  if (p.skipped) parts.push(`${p.skipped} skipped`);
  return parts.join(', ') + '.';
}
