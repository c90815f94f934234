import { isRunStatusIn, OPEN_RUN_STATUSES, type Outcome } from '@metronome/core';
import type { RunForSend } from '@metronome/db';
import type { JobDeps } from './deps.js';

export interface RunJobInput {
  jobId: string;
  runId: string;
}

/**
 * A job's first step: its run, with when its next targets come due (the lanes keep those they
 * wait for inline: a run whose chats come due a pace interval apart, each held by its own
 * per-chat interval, is sent by one job, not one job a chat), or the outcome that ends the job
 * at once.
 */
export async function loadJobRun(deps: JobDeps, job: RunJobInput): Promise<RunForSend | Outcome> {
  const run = await deps.repo.runs.loadRun(job.runId, deps.settings.sendsPerJob);
  if (!run) return 'inactive-campaign';
  // A job that no longer carries the run (superseded by a resume, a retry or a continuation) does nothing.
  if (run.jobId !== job.jobId) return 'stale-message';
  if (!isRunStatusIn(run.status, OPEN_RUN_STATUSES)) return 'inactive-campaign';
  return run;
}
