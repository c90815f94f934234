import {
  decideJobEnd,
  decideJobStart,
  formatLocalTime,
  isRunStatusIn,
  open,
  OPEN_RUN_STATUSES,
  statusAtWindowClose,
  windowCloseCauseSentence,
  windowClosedSummary,
  type JobEnd,
  type JobStart,
  type Outcome,
} from '@metronome/core';
import type { RunForSend, RunProgress } from '@metronome/db';
import type { TransportAccount } from '@metronome/transports';
import type { JobDeps, SenderDeps } from './deps.js';
import { withEvents } from './reporting-events.js';
import { accountPerMinute, recordHealth } from './account-health.js';
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
export async function processRunJob(input: SenderDeps, job: RunJobInput): Promise<Outcome> {
  const deps = withEvents(input);
  // Targets due within the longest inline wait are this job's too: a run whose chats come due a
  // few ms apart (each held by its own per-chat interval) is sent by one job, not one job a chat.
  const run = await deps.repo.runs.loadRun(job.runId, new Date(deps.clock.now() + deps.settings.maxInlineWaitMs), deps.settings.sendsPerJob);
  if (!run) return 'inactive-campaign';
  // A job that no longer carries the run (superseded by a resume, a retry or a continuation) does nothing.
  if (run.jobId !== job.jobId) return 'stale-message';
  if (!isRunStatusIn(run.status, OPEN_RUN_STATUSES)) return 'inactive-campaign';

  const now = deps.clock.now();
  const start = decideJobStart(run, now, deps.settings.lockRetryMs);
  if (start.kind !== 'go') return applyDecision(deps, run, start, now, null);

  const transport = deps.transports[run.account.platform];
  if (!transport) {
    deps.events.emit('transport:missing', { runId: run.runId, platform: run.account.platform });
    await deps.repo.runs.pause(run.runId, 'account_unavailable', `This deployment has no ${run.account.platform} transport.`, new Date(now));
    return 'no-account';
  }

  const readiness = await transport.readiness?.(run.account.id);
  if (readiness && !readiness.ready) {
    deps.events.emit('account:elsewhere', { runId: run.runId, accountId: run.account.id, reason: readiness.reason });
    return continueLater(deps, run, readiness.retryAfterMs * (1 + deps.random() * 0.5), 'lock-busy');
  }
  const lock = await deps.lock.acquire(run.account.id, deps.settings.lockTtlMs);
  if (!lock.held) {
    const delay = deps.settings.lockRetryMs * (1 + deps.random() * 0.5);
    return continueLater(deps, run, delay, 'lock-busy');
  }
  const renew = setInterval(() => {
    deps.lock.extend(run.account.id, lock.token, deps.settings.lockTtlMs).catch(() => undefined);
  }, Math.max(100, Math.floor(deps.settings.lockTtlMs / 3)));
  try {
    // A continuation finds its run already running: skip the write (claims re-check the status).
    if (run.status === 'queued' && !(await deps.repo.runs.markRunning(run.runId, new Date(deps.clock.now())))) return 'inactive-campaign';
    const account = transportAccount(deps, run);
    const lanes = run.account.groupConcurrency ?? deps.settings.defaultGroupConcurrency;
    const report = await runLanes(deps, run, account, transport, lock.token, lanes);
    if (report.stop === 'account-unavailable') return 'no-account';
    const cooled = await recordHealth(deps, run, report).catch((error: unknown) => {
      deps.events.emit('account:health-lost', { accountId: run.account.id, error });
      return null;
    });

    const progress = report.progress ?? (await deps.repo.runs.progress(run.runId));
    const end = deps.clock.now();
    return await applyDecision(deps, run, decideJobEnd(progress, report, run, cooled, end, deps.settings.lockRetryMs), end, progress);
  } finally {
    clearInterval(renew);
    await deps.lock.release(run.account.id, lock.token).catch(() => undefined);
  }
}

function transportAccount(deps: JobDeps, run: RunForSend): TransportAccount {
  const credentials = run.account.credentials ? (JSON.parse(open(run.account.credentials, deps.secretsKeys).toString('utf8')) as Record<string, unknown>) : null;
  return { id: run.account.id, externalId: run.account.externalId, credentials };
}

/**
 * Applies a start or end decision of libs/core: finishes, pauses, closes the window or hands
 * the run to its next job. `now` is when it was decided; `progress` is the run's, when the job
 * already read it.
 */
async function applyDecision(deps: JobDeps, run: RunForSend, decision: Exclude<JobStart | JobEnd, { kind: 'go' }>, now: number, progress: RunProgress | null): Promise<Outcome> {
  switch (decision.kind) {
    case 'continue':
      return continueLater(deps, run, decision.at - now, decision.outcome);
    case 'pause':
      await deps.repo.runs.pause(run.runId, decision.reason, decision.summary, new Date(now));
      return decision.outcome;
    case 'finish':
      await deps.repo.runs.finish(run.runId, decision.status, decision.summary, new Date(now));
      return decision.outcome;
    case 'close-window': {
      const because = decision.because ? windowCloseCauseSentence(decision.because, run.timezone, deps.settings.cooling) : undefined;
      await closeWindow(deps, run, progress ?? (await deps.repo.runs.progress(run.runId)), because);
      return decision.outcome;
    }
  }
}

/**
 * Hands the run to a new job delayed by `delayMs`. The hand-over is a compare-and-set on the
 * run's job step, so only the job that carries the run can continue it (the job checked at
 * its start that it carries the run: the run's job id was its own, at `run.jobSeq`).
 */
async function continueLater(deps: JobDeps, run: RunForSend, delayMs: number, outcome: Outcome): Promise<Outcome> {
  const next = await deps.repo.runs.handOver(run.runId, run.jobSeq, new Date(deps.clock.now()));
  if (!next) return 'stale-message';
  // If this enqueue is lost (Redis down), the scheduler's reconciler re-adds the job by its id.
  await deps.queue.enqueue(run.runId, next.jobSeq, Math.max(0, delayMs));
  return outcome;
}

/**
 * The window closed with targets pending: the run pauses (resumable), or fails if it never sent.
 * `because`, when given, opens the summary (what kept the run from finishing in the window).
 */
async function closeWindow(deps: JobDeps, run: RunForSend, progress: RunProgress, because?: string): Promise<void> {
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
  if (statusAtWindowClose(progress, progress.anyAttempt) === 'paused') await deps.repo.runs.pause(run.runId, 'window_closed', prefix + summary, now);
  else await deps.repo.runs.failBeforeFirstSend(run.runId, `${prefix}Delivery window closed at ${closedAt} (${run.timezone}) before the first send.`, now);
}
