import { formatLocalTime, statusAtWindowClose, windowCloseCauseSentence, windowClosedSummary, type JobEnd, type JobStart, type Outcome } from '@metronome/core';
import type { RunForSend, RunProgress } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { accountPerMinute } from './account-health.js';

/**
 * A job's last step: applies a start or end decision of libs/core (job-end.ts). Finishes,
 * pauses, closes the window or hands the run to its next job. `now` is when it was decided;
 * `progress` is the run's, when the job already read it.
 */
export async function applyDecision(deps: JobDeps, run: RunForSend, decision: Exclude<JobStart | JobEnd, { kind: 'go' }>, now: number, progress: RunProgress | null): Promise<Outcome> {
  switch (decision.kind) {
    case 'continue':
      return handOver(deps, run, decision.at - now, decision.outcome);
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
export async function handOver(deps: JobDeps, run: RunForSend, delayMs: number, outcome: Outcome): Promise<Outcome> {
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
