import { randomUUID } from 'node:crypto';
import { planOccurrence, type Clock, type Outcome } from '@metronome/core';
import type { CampaignAdvance, NewRun, ScheduleRepository } from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import { runJobId, type RunQueue } from '@metronome/queue';

export interface TickDeps {
  repo: ScheduleRepository;
  queue: RunQueue;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  batch: number;
  jitterMs: number;
  /** runs due within this much of now are created already, their jobs delayed to the exact time */
  lookaheadMs: number;
}

export interface TickResult {
  created: number;
  waitingForWindow: number;
  noAccount: number;
}

/**
 * One scheduler tick: in one transaction fenced by the leader's token, turn every due,
 * actionable campaign (at most `batch`, oldest first) into a run with its targets, and move the
 * campaigns to their next occurrence; then enqueue one job per created run, delayed to its
 * scheduled time. A constant number of statements, whatever the number of campaigns.
 */
export async function runTick(deps: TickDeps, fence: number): Promise<TickResult> {
  const now = new Date(deps.clock.now());
  const horizon = new Date(now.getTime() + deps.lookaheadMs);
  const decided = await deps.repo.tick(fence, async (tx) => {
    const due = await tx.dueCampaigns(horizon, deps.batch);
    const runs: NewRun[] = [];
    const advances: CampaignAdvance[] = [];
    const log: { campaignId: string; decision: string; dueAt: Date; scheduledAt?: Date; next: Date | null; coalesced?: number }[] = [];
    for (const c of due) {
      const plan = planOccurrence(
        { campaignId: c.id, schedule: c.schedule, timezone: c.timezone, window: { start: c.windowStart, end: c.windowEnd }, dueAt: c.nextRunAt },
        now,
        deps.jitterMs,
      );
      if (plan.kind === 'wait-for-window') {
        advances.push({ id: c.id, nextRunAt: plan.next, active: true });
        log.push({ campaignId: c.id, decision: 'window-closed', dueAt: c.nextRunAt, next: plan.next });
        continue;
      }
      const id = randomUUID();
      runs.push({
        id,
        campaignId: c.id,
        tenantId: c.tenantId,
        accountId: c.accountId,
        trigger: 'schedule',
        parts: c.messages,
        scheduledAt: plan.scheduledAt,
        windowEndAt: plan.windowEndAt,
        jobId: runJobId(id, 0),
      });
      advances.push({ id: c.id, nextRunAt: plan.next, active: plan.next !== null || c.schedule.type !== 'once' });
      log.push({ campaignId: c.id, decision: 'run', dueAt: c.nextRunAt, scheduledAt: plan.scheduledAt, next: plan.next, coalesced: plan.coalesced });
    }
    const createdIds = new Set(await tx.createRuns(runs));
    await tx.advance(advances, now);
    return { runs: runs.filter((r) => createdIds.has(r.id)), log };
  });

  await deps.queue.enqueueMany(decided.runs.map((r) => ({ runId: r.id, seq: 0, delayMs: r.scheduledAt.getTime() - deps.clock.now() })));

  const createdAt = deps.clock.now();
  const byCampaign = new Map(decided.runs.map((r) => [r.campaignId, r]));
  let waitingForWindow = 0;
  for (const entry of decided.log) {
    const run = byCampaign.get(entry.campaignId);
    const outcome: Outcome = entry.decision === 'run' ? (run ? 'sent' : 'stale-message') : 'window-closed';
    if (entry.decision !== 'run') waitingForWindow++;
    if (run) deps.metrics.scheduleLag.observe(Math.max(0, createdAt - entry.dueAt.getTime()) / 1000);
    deps.metrics.jobOutcomes.inc({ outcome });
    deps.logger.info(
      { campaignId: entry.campaignId, runId: run?.id, outcome, dueAt: entry.dueAt, scheduledAt: entry.scheduledAt, next: entry.next, coalesced: entry.coalesced },
      entry.decision === 'run' ? (run ? 'run created' : 'occurrence already had a run') : 'due outside the delivery window: moved to its next start',
    );
  }
  const noAccount = await deps.repo.countDueWithoutAccount(now);
  if (noAccount > 0) {
    deps.metrics.jobOutcomes.inc({ outcome: 'no-account' }, noAccount);
    deps.logger.info({ outcome: 'no-account', campaigns: noAccount }, 'due campaigns held back: their account is disabled, disconnected or blocked');
  }
  return { created: decided.runs.length, waitingForWindow, noAccount };
}
