import { randomUUID } from 'node:crypto';
import {
  CampaignProblem,
  createDueRun as createRunIfDue,
  planDueRun,
  type DB,
  type DueCampaign,
  type FirstRun,
  type RunIds,
  type RunPlan,
} from '@metronome/db';
import { runJobId } from '@metronome/queue';
import type { Transaction } from 'kysely';
import type { ApiContext } from './context.js';
import { validationFailed } from './errors.js';
import { enqueue } from './run-actions.js';
import { nudgeIfDue } from './scheduler-nudge.js';

/** A run the API created for a campaign's due occurrence, to be queued once its transaction commits. */
export interface InstantRun {
  runId: string;
  campaignId: string;
  /** the occurrence it stands for */
  dueAt: Date;
  scheduledAt: Date;
}

/**
 * Instant starts (CONTRACT): inside the transaction that saved `campaign` (a create, or a PATCH
 * that activated or rescheduled it), when its occurrence is due, the API creates its run through
 * the tick's own code (libs/db run-creation: the due query, planDue, one statement that keeps one
 * run per occurrence and one open run per campaign and moves the campaign on). The campaign's row
 * is this transaction's, so no tick can take the same occurrence. Not due, held, outside its
 * window: left to the tick, which the caller nudges. A plan the tick would set aside (it could not
 * turn the campaign into a run) is the request's 400, and nothing is saved.
 *
 * INSTANT_STARTS=nudge leaves every case to the tick (under a burst of creates the nudged tick
 * made the first runs wait: bench/results/HISTORY.md).
 */
export async function createDueRun(
  ctx: ApiContext,
  trx: Transaction<DB>,
  campaign: { id: string; active: boolean; nextRunAt: Date | null },
  now: Date,
): Promise<InstantRun | null> {
  if (!mayStartAt(ctx, campaign, now)) return null;
  const created = await refuseProblem(() => createRunIfDue(trx, campaign.id, now, jitterOf(ctx), newRunIds()));
  return created ? instantRun(created) : null;
}

/**
 * createDueRun for a campaign about to be inserted, planned before the insert, which creates the
 * run in its own statement when the account can send (CampaignRepository.create with `first`).
 * A new row passes the due query's other conditions: not deleted, no run, unseen by any tick.
 */
export function planFirstRun(ctx: ApiContext, campaign: DueCampaign & { active: boolean }, now: Date): { writes: FirstRun; instant: InstantRun } | null {
  if (!mayStartAt(ctx, campaign, now)) return null;
  try {
    const planned = planDueRun(campaign, now, jitterOf(ctx), newRunIds());
    return planned ? { writes: planned, instant: instantRun(planned) } : null;
  } catch (error) {
    throw refusal(error);
  }
}

/** Instant starts are on, and the campaign is active with its occurrence due at `now`. */
function mayStartAt(ctx: ApiContext, campaign: { active: boolean; nextRunAt: Date | null }, now: Date): boolean {
  if ((ctx.config.instantStarts ?? 'create') !== 'create') return false;
  return campaign.active && campaign.nextRunAt !== null && campaign.nextRunAt <= now;
}

const jitterOf = (ctx: ApiContext): number => ctx.config.schedulerJitterMs ?? 0;

function newRunIds(): RunIds {
  const runId = randomUUID();
  return { runId, jobId: runJobId(runId, 0) };
}

function instantRun(p: FirstRun & { plan: RunPlan }): InstantRun {
  return { runId: p.run.id, campaignId: p.run.campaignId, dueAt: p.plan.occurrence, scheduledAt: p.plan.scheduledAt };
}

async function refuseProblem<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw refusal(error);
  }
}

/** A CampaignProblem becomes the request's 400 naming it; any other error is left as it is. */
function refusal(error: unknown): unknown {
  return error instanceof CampaignProblem ? validationFailed([], `the campaign cannot be turned into a run: ${error.problem}`) : error;
}

/**
 * After the commit: queues the run the transaction created (delayed to its scheduledAt) and
 * counts it as the scheduler counts the runs it creates; or, when it created none, nudges the
 * scheduler for a campaign that is due. A job Redis does not take is re-added by the
 * reconciler, so failures are logged, never answered.
 */
export async function startCreatedRun(ctx: ApiContext, created: InstantRun | null, campaign: { active: boolean; nextRunAt: Date | null }): Promise<void> {
  if (!created) return nudgeIfDue(ctx, campaign);
  const now = ctx.clock.now();
  ctx.metrics.scheduleLag.observe(Math.max(0, now - created.dueAt.getTime()) / 1000);
  ctx.metrics.jobOutcomes.inc({ outcome: 'sent' });
  ctx.logger.info({ campaignId: created.campaignId, runId: created.runId, scheduledAt: created.scheduledAt }, 'run created at once for a due occurrence');
  await enqueue(ctx, created.runId, 0, created.scheduledAt.getTime() - now);
}
