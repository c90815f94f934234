import { randomUUID } from 'node:crypto';
import { FINISHED_RUN_STATUSES, isRunStatusIn, LIVE_RUN_STATUSES, OPEN_RUN_STATUSES, placeInWindow } from '@metronome/core';
import { CampaignRepository, insertRuns, type RunRow, type RunStatus } from '@metronome/db';
import { runJobId } from '@metronome/queue';
import type { ApiContext } from './context.js';
import { conflict, notFound } from './errors.js';
import { withTimeout } from './timeout.js';

// The operator's run commands (CONTRACT §3 Runs). PostgreSQL decides: each command is one
// conditional UPDATE, and only the caller whose UPDATE matched goes on to enqueue a job.

const OPEN_RUN_INDEX = 'runs_one_open_per_campaign';
const ENQUEUE_TIMEOUT_MS = 2000;

/**
 * Runs `POST /v1/campaigns/{id}/runs`: a manual run of the campaign, placed in its window. Its
 * chats keep the per-chat interval unless `ignoreInterval` (then every chat is due at once).
 */
export async function startManualRun(
  ctx: ApiContext,
  campaignId: string,
  tenantId: string | null,
  opts: { ignoreInterval: boolean } = { ignoreInterval: false },
): Promise<RunRow> {
  const now = ctx.now();
  const runId = randomUUID();
  const placed = await ctx.db.transaction().execute(async (trx) => {
    // Locked, so a concurrent DELETE cannot slip between the read and the insert.
    const campaign = await new CampaignRepository(trx).findForUpdate(campaignId, tenantId);
    if (!campaign) throw notFound('campaign');
    const at = placeInWindow(now, { start: campaign.windowStart, end: campaign.windowEnd }, campaign.timezone);
    const created = await insertRuns(trx, [
      {
        id: runId,
        campaignId: campaign.id,
        tenantId: campaign.tenantId,
        accountId: campaign.accountId,
        trigger: 'manual',
        parts: campaign.messages,
        scheduledAt: at.startAt,
        windowEndAt: at.windowEndAt,
        jobId: runJobId(runId, 0),
        ignoreInterval: opts.ignoreInterval,
      },
    ]);
    if (created.length === 0) throw conflict('the campaign already has a queued or running run');
    return at;
  });
  await enqueue(ctx, runId, 0, placed.startAt.getTime() - now.getTime());
  return mustFind(ctx, runId);
}

/** queued | running → paused (operator). The sender starts no new send for a paused run. */
export async function pauseRun(ctx: ApiContext, runId: string, tenantId: string | null): Promise<RunRow> {
  const run = await ctx.runs.pause(runId, tenantId, ctx.now());
  return run ?? refuse(ctx, runId, tenantId, 'pause', OPEN_RUN_STATUSES);
}

/** queued | running | paused → cancelled; pending targets become skipped. */
export async function cancelRun(ctx: ApiContext, runId: string, tenantId: string | null): Promise<RunRow> {
  const run = await ctx.runs.cancel(runId, tenantId, ctx.now());
  return run ?? refuse(ctx, runId, tenantId, 'cancel', LIVE_RUN_STATUSES);
}

/**
 * paused → queued: the same run continues with its pending targets, under the campaign's
 * current window (so widening the window before resuming lets a big run finish today).
 */
export async function resumeRun(ctx: ApiContext, runId: string, tenantId: string | null): Promise<RunRow> {
  const run = await ctx.runs.findWithWindow(runId, tenantId);
  if (!run) throw notFound('run');
  if (run.status !== 'paused') throw refusal('resume', run.status, ['paused']);
  const now = ctx.now();
  const at = placeInWindow(now, { start: run.windowStart, end: run.windowEnd }, run.timezone);
  const resumed = await oneOpenRun(() => ctx.runs.resume(runId, tenantId, { expectedSeq: run.jobSeq, windowEndAt: at.windowEndAt, now }));
  if (!resumed) return refuse(ctx, runId, tenantId, 'resume', ['paused']);
  // The row's id, not the path's: the job id the statement derived is made from it.
  await enqueue(ctx, resumed.id, resumed.jobSeq, at.startAt.getTime() - now.getTime());
  return resumed;
}

/** A finished run's failed and unknown targets go back to pending and the run is queued again. */
export async function retryFailedRun(ctx: ApiContext, runId: string, tenantId: string | null): Promise<RunRow> {
  const run = await ctx.runs.findWithWindow(runId, tenantId);
  if (!run) throw notFound('run');
  if (!isRunStatusIn(run.status, FINISHED_RUN_STATUSES)) throw refusal('retry', run.status, FINISHED_RUN_STATUSES);
  const now = ctx.now();
  const at = placeInWindow(now, { start: run.windowStart, end: run.windowEnd }, run.timezone);
  const queued = await oneOpenRun(() => ctx.runs.retryFailed(runId, tenantId, { expectedSeq: run.jobSeq, windowEndAt: at.windowEndAt, now }));
  if (!queued) {
    if ((await ctx.runs.countRetriable(runId)) === 0) throw conflict('the run has no failed or unknown targets to retry');
    return refuse(ctx, runId, tenantId, 'retry', FINISHED_RUN_STATUSES);
  }
  await enqueue(ctx, queued.id, queued.jobSeq, at.startAt.getTime() - now.getTime());
  return queued;
}

/** The run, which the caller just created or changed. */
async function mustFind(ctx: ApiContext, runId: string): Promise<RunRow> {
  const run = await ctx.runs.find(runId, null);
  if (!run) throw notFound('run');
  return run;
}

// The UPDATE matched nothing: either there is no such run (for this tenant), or it is not in
// a state the command applies to (possibly because a concurrent command moved it first).
async function refuse(ctx: ApiContext, runId: string, tenantId: string | null, action: string, from: readonly RunStatus[]): Promise<never> {
  const run = await ctx.runs.find(runId, tenantId);
  if (!run) throw notFound('run');
  throw refusal(action, run.status, from);
}

function refusal(action: string, status: RunStatus, from: readonly RunStatus[]) {
  return conflict(`cannot ${action} a run that is ${status}; only a run that is ${from.join(', ')}`);
}

// Re-queueing a run while its campaign has another queued or running run trips the partial
// unique index; that is the caller's conflict, not a server fault.
async function oneOpenRun<T>(update: () => Promise<T>): Promise<T> {
  try {
    return await update();
  } catch (err) {
    const e = err as { code?: unknown; constraint?: unknown };
    if (e.code === '23505' && e.constraint === OPEN_RUN_INDEX) {
      throw conflict('the campaign already has another queued or running run; cancel or wait for it first');
    }
    throw err;
  }
}

/**
 * Adds the run's job. PostgreSQL already says the run is queued, so a Redis that does not
 * answer in time only delays it: the scheduler's reconciler enqueues queued runs that have no
 * job. The command therefore still succeeds; the failure is logged.
 */
export async function enqueue(ctx: ApiContext, runId: string, seq: number, delayMs: number): Promise<void> {
  try {
    await withTimeout(ctx.queue.enqueue(runId, seq, delayMs), ENQUEUE_TIMEOUT_MS, 'enqueue');
  } catch (err) {
    ctx.logger.warn({ err, runId, seq }, 'could not enqueue run; the reconciler will');
  }
}
