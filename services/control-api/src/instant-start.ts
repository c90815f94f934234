import { randomUUID } from 'node:crypto';
import { planOccurrence } from '@metronome/core';
import { dueOccurrence, occurrenceRun, TickTransaction, type DB, type DueCampaign, type FirstRun } from '@metronome/db';
import { runJobId } from '@metronome/queue';
import type { Transaction } from 'kysely';
import type { ApiContext } from './context.js';
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
 * Instant starts (CONTRACT): inside the transaction that saved `campaign` (a create, or a
 * PATCH that activated or rescheduled it), when its occurrence is due and the scheduler's tick
 * would create a run for it, the API creates that run itself, as the tick would: the same
 * conditions (`dueCampaigns`: active, account able to send, no open run), the same plan (libs/core
 * planOccurrence: catch-up, window, jitter, never early), the same writes in one statement
 * (insertRuns' CTEs, which keep one run per occurrence and one open run per campaign, and the
 * campaign's move to its next occurrence: createRunsAndAdvance after a PATCH, the insert's own
 * statement for a new campaign). The campaign's row is this
 * transaction's, so no tick can take the same occurrence: the tick's query skips locked rows,
 * and once this commits the occurrence is no longer due. Anything else (not due, held, outside
 * its window, a plan that throws) is left to the tick, which the caller nudges: it decides,
 * counts and explains those cases.
 *
 * INSTANT_STARTS=nudge leaves every case to the tick. Why not only the nudge: a nudged tick is
 * a round of Redis and a transaction of its own per burst of creates, and under a burst the
 * first runs waited for it (bench/results/HISTORY.md).
 */
export async function createDueRun(
  ctx: ApiContext,
  trx: Transaction<DB>,
  campaign: { id: string; active: boolean; nextRunAt: Date | null },
  now: Date,
): Promise<InstantRun | null> {
  if (!mayStartAt(ctx, campaign, now)) return null;
  const tick = new TickTransaction(trx);
  const [due] = await tick.dueCampaigns(now, 1, campaign.id);
  const planned = due ? planRun(ctx, due, now) : null;
  if (!planned) return null;
  // the campaign moves on either way, as in the tick; no run: the occurrence already had one
  const created = await tick.createRunsAndAdvance([planned.writes.run], [planned.writes.advance]);
  return created.length > 0 ? planned.instant : null;
}

/**
 * createDueRun for a campaign about to be inserted, planned before the insert: the insert
 * creates the run in the same statement when the campaign's account can send
 * (CampaignRepository.create with `first`), without the due query. A new row cannot fail the
 * query's other conditions: it is not deleted, has no run (none open, no previous occurrence)
 * and no tick can see it before its transaction commits. One round trip from the save to the run.
 */
export function planFirstRun(ctx: ApiContext, campaign: DueCampaign & { active: boolean }, now: Date): { writes: FirstRun; instant: InstantRun } | null {
  return mayStartAt(ctx, campaign, now) ? planRun(ctx, campaign, now) : null;
}

/** Instant starts are on, and the campaign is active with its occurrence due at `now`. */
function mayStartAt(ctx: ApiContext, campaign: { active: boolean; nextRunAt: Date | null }, now: Date): boolean {
  if ((ctx.config.instantStarts ?? 'create') !== 'create') return false;
  return campaign.active && campaign.nextRunAt !== null && campaign.nextRunAt <= now;
}

/** Plans `due`'s occurrence as the tick does: its run and the campaign's advance, when the plan is a run. */
function planRun(ctx: ApiContext, due: DueCampaign, now: Date): { writes: FirstRun; instant: InstantRun } | null {
  let plan: ReturnType<typeof planOccurrence>;
  try {
    plan = planOccurrence(dueOccurrence(due), now, ctx.config.schedulerJitterMs ?? 0);
  } catch {
    return null; // the tick sets the campaign aside, saying why
  }
  if (plan.kind !== 'run') return null;
  const runId = randomUUID();
  return {
    writes: occurrenceRun(due, plan, runId, runJobId(runId, 0)),
    instant: { runId, campaignId: due.id, dueAt: plan.occurrence, scheduledAt: plan.scheduledAt },
  };
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
