import { randomUUID } from 'node:crypto';
import { decideHeld, noAccountPauseReason, noSkips, placeInWindow, SKIP_REASONS, totalSkipped, type Clock, type SkipCounts } from '@metronome/core';
import {
  deliveryWindowProblem,
  ensure,
  occurrenceRun,
  planDue,
  scheduleProblem,
  timeProblem,
  timezoneProblem,
  type AutoResume,
  type CampaignAdvance,
  type HeldUpdate,
  type NewRun,
  type ScheduleRepository,
  type TickTransaction,
} from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import { runJobId, type RunQueue } from '@metronome/queue';
import { isDataError, Quarantine } from './quarantine.js';
import { eventsOf } from './reporting-events.js';
import type { SchedulerEvents, ScheduleDecision } from './scheduler-events.js';

export interface TickDeps {
  repo: ScheduleRepository;
  queue: RunQueue;
  clock: Clock;
  events?: SchedulerEvents;
  /** for deps built without `events` (reporting-events.ts) */
  logger: Logger;
  metrics: Metrics;
  batch: number;
  jitterMs: number;
  /** runs due within this much of now are created already, their jobs delayed */
  lookaheadMs: number;
  noAccountAutopauseAfter?: number;
}

export interface TickResult {
  created: number;
  waitingForWindow: number;
  noAccount: number;
  autoResumed: number;
  autoPaused: number;
  /** occurrences skipped because the scheduler or the campaign's previous run was behind */
  coalesced: number;
  skipped: SkipCounts;
}

type Decision = ScheduleDecision;

interface Decided {
  runs: NewRun[];
  resumed: (AutoResume & { startAt: Date; campaignId: string; jobSeq: number })[];
  decisions: Decision[];
  held: number;
  waitingForWindow: number;
  autoPaused: number;
}

/**
 * One scheduler tick, one transaction fenced by the leader's token: (1) window-paused autoResume runs queued again,
 * (2) due campaigns turned into runs and moved on, (3) campaigns whose account cannot send counted and paused after
 * NO_ACCOUNT_AUTOPAUSE_AFTER; then one job per run. A constant number of statements. A campaign it cannot turn into
 * a run is deactivated with the reason (`failed`); a batch failing on its data is redone split, to set its rows aside.
 */
export async function runTick(deps: TickDeps, fence: number): Promise<TickResult> {
  const now = new Date(deps.clock.now());
  const events = eventsOf(deps);
  let decided: Decided;
  try {
    decided = await deps.repo.tick(fence, (tx) => decide(deps, new Quarantine(tx, false), tx, now));
  } catch (error) {
    if (!isDataError(error)) throw error;
    events.emit('tick:redo', { error });
    decided = await deps.repo.tick(fence, (tx) => decide(deps, new Quarantine(tx, true), tx, now));
  }

  await deps.queue.enqueueMany([
    ...decided.resumed.map((r) => ({ runId: r.id, seq: r.jobSeq, delayMs: r.startAt.getTime() - deps.clock.now() })),
    ...decided.runs.map((r) => ({ runId: r.id, seq: 0, delayMs: r.scheduledAt.getTime() - deps.clock.now() })),
  ]);

  const createdAt = deps.clock.now();
  let coalesced = 0;
  const skipped = noSkips();
  for (const d of decided.decisions) {
    if (d.skipped) {
      coalesced += totalSkipped(d.skipped);
      for (const r of SKIP_REASONS) skipped[r] += d.skipped[r];
    }
    events.emit('schedule:decision', { decision: d, at: createdAt });
  }
  // Held campaigns count at every check (CONTRACT §4), but only a newly missed occurrence is logged.
  const repeated = decided.held - decided.decisions.filter((d) => d.outcome === 'no-account').length;
  events.emit('tick:counts', { repeatedNoAccount: repeated, coalesced, skipped, autoResumed: decided.resumed.length, autoPaused: decided.autoPaused });
  return {
    created: decided.runs.length,
    waitingForWindow: decided.waitingForWindow,
    noAccount: decided.held,
    autoResumed: decided.resumed.length,
    autoPaused: decided.autoPaused,
    coalesced,
    skipped,
  };
}

async function decide(deps: TickDeps, q: Quarantine, tx: TickTransaction, now: Date): Promise<Decided> {
  const horizon = new Date(now.getTime() + deps.lookaheadMs);
  const autopauseAfter = deps.noAccountAutopauseAfter ?? 0;
  const decisions: Decision[] = [];

  // (1) Automatic resume, before new runs: the resumed run holds the campaign's one open slot.
  const paused = await tx.windowPausedRuns(deps.batch);
  const resumes: (AutoResume & { startAt: Date; campaignId: string })[] = [];
  const resumedCampaigns = new Set<string>();
  for (const p of paused) {
    if (resumedCampaigns.has(p.campaignId) || q.has(p.campaignId)) continue; // one open run per campaign
    const at = q.attempt(p.campaignId, () => {
      ensure(timezoneProblem(p.timezone) ?? deliveryWindowProblem(p.windowStart, p.windowEnd));
      const placed = placeInWindow(now, { start: p.windowStart, end: p.windowEnd }, p.timezone);
      ensure(timeProblem('its window start', placed.startAt) ?? timeProblem('its window end', placed.windowEndAt));
      return placed;
    });
    if (!at || at.startAt.getTime() > horizon.getTime()) continue;
    resumedCampaigns.add(p.campaignId);
    resumes.push({ id: p.id, campaignId: p.campaignId, expectedSeq: p.jobSeq, windowEndAt: at.windowEndAt, startAt: at.startAt });
  }
  const stepOf = new Map(
    (
      await q.batch(
        resumes,
        (r) => r.campaignId,
        (rs) => tx.autoResume(rs, now),
      )
    ).map((r) => [r.id, r.jobSeq]),
  );
  const resumed = resumes.filter((r) => stepOf.has(r.id)).map((r) => ({ ...r, jobSeq: stepOf.get(r.id)! }));
  for (const r of resumed) {
    decisions.push({
      campaignId: r.campaignId,
      runId: r.id,
      outcome: 'sent',
      reason: 'auto-resume: window-paused run queued again at its window start',
      scheduledAt: r.startAt,
    });
  }

  // (2) Due, actionable campaigns become runs.
  const due = await tx.dueCampaigns(horizon, deps.batch);
  const runs: NewRun[] = [];
  const advances: CampaignAdvance[] = [];
  const moved: Decision[] = [];
  const planned = new Map<string, Decision>();
  for (const c of due) {
    if (q.has(c.id)) continue;
    const plan = q.attempt(c.id, () => planDue(c, now, deps.jitterMs));
    if (!plan) continue;
    if (plan.kind === 'too-early') {
      advances.push({ id: c.id, nextRunAt: plan.next, active: true, skipped: 0, lastSkippedAt: null, catchUpThrough: c.catchUpThrough });
      moved.push({
        campaignId: c.id,
        outcome: 'deferred',
        reason: 'due less than everySeconds after the previous occurrence: moved to the previous one plus everySeconds',
        dueAt: c.nextRunAt,
        next: plan.next,
      });
      continue;
    }
    const skips = { skipped: totalSkipped(plan.skipped), lastSkippedAt: plan.lastSkippedAt, catchUpThrough: plan.acceptedThrough };
    if (plan.kind === 'wait-for-window') {
      advances.push({ id: c.id, nextRunAt: plan.next, active: true, ...skips });
      moved.push({
        campaignId: c.id,
        outcome: 'window-closed',
        reason: 'due outside the delivery window: moved to its next start',
        dueAt: c.nextRunAt,
        next: plan.next,
        skipped: plan.skipped,
      });
      continue;
    }
    if (plan.kind === 'skipped') {
      advances.push({ id: c.id, nextRunAt: plan.next, active: true, ...skips });
      moved.push({
        campaignId: c.id,
        outcome: 'deferred',
        reason: `every due occurrence skipped by the catch-up policy ${c.catchUpPolicy}: moved to the next one`,
        dueAt: c.nextRunAt,
        next: plan.next,
        skipped: plan.skipped,
      });
      continue;
    }
    const id = randomUUID();
    const created = occurrenceRun(c, plan, id, runJobId(id, 0));
    runs.push(created.run);
    advances.push(created.advance);
    // dueAt: the occurrence the run stands for, so lag is measured from it
    planned.set(id, {
      campaignId: c.id,
      runId: id,
      outcome: 'sent',
      reason: 'run created',
      dueAt: plan.occurrence,
      scheduledAt: plan.scheduledAt,
      next: plan.next,
      coalesced: plan.coalesced,
      skipped: plan.skipped,
    });
  }
  const runOf = new Map(runs.map((r) => [r.campaignId, r]));
  const createdIds = new Set(
    await q.batch(
      advances,
      (a) => a.id,
      (as) =>
        tx.createRunsAndAdvance(
          as.flatMap((a) => runOf.get(a.id) ?? []),
          as,
        ),
    ),
  );
  for (const [id, d] of planned) {
    if (createdIds.has(id)) {
      decisions.push(d);
    } else if (!q.has(d.campaignId)) {
      decisions.push({
        ...d,
        runId: undefined,
        outcome: 'stale-message',
        reason: 'occurrence already had a run, or the campaign another open run: nothing created',
      });
    }
  }
  decisions.push(...moved.filter((d) => !q.has(d.campaignId)));

  // (3) Due campaigns whose account cannot send: held, counted, paused after too many.
  const held = (await tx.dueWithoutAccount(now, deps.batch)).filter((h) => !q.has(h.id));
  const heldUpdates: (HeldUpdate & { decision: Decision })[] = [];
  for (const h of held) {
    const decision = q.attempt(h.id, () => {
      ensure(timeProblem('its due time', h.nextRunAt) ?? scheduleProblem(h.schedule) ?? timezoneProblem(h.timezone));
      const d = decideHeld({ schedule: h.schedule, timezone: h.timezone, dueAt: h.nextRunAt, streak: h.streak }, now, autopauseAfter);
      if (d.kind !== 'same') ensure(Number.isSafeInteger(d.streak) && d.streak >= 0 ? null : 'its schedule gives no count of missed occurrences');
      return d;
    });
    if (!decision || decision.kind === 'same') continue;
    const pauseReason = decision.kind === 'pause' ? noAccountPauseReason(decision.streak, h.accountStatus, h.blockedUntil) : null;
    heldUpdates.push({
      id: h.id,
      streak: decision.streak,
      pauseReason,
      decision: {
        campaignId: h.id,
        outcome: 'no-account',
        reason:
          pauseReason ??
          `held: account ${h.accountStatus}${h.blockedUntil && h.blockedUntil > now ? ` and blocked until ${h.blockedUntil.toISOString()}` : ''}; re-checked every tick`,
        dueAt: h.nextRunAt,
        streak: decision.streak,
      },
    });
  }
  await q.batch(
    heldUpdates,
    (u) => u.id,
    async (us) => {
      await tx.recordHeld(us, now);
      return [];
    },
  );
  const recorded = heldUpdates.filter((u) => !q.has(u.id));
  decisions.push(...recorded.map((u) => u.decision));

  const isolations = [...q.reasons].map(([id, reason]) => ({ id, reason }));
  for (const id of await tx.isolate(isolations, now)) {
    decisions.push({ campaignId: id, outcome: 'failed', reason: q.reasons.get(id)! });
  }

  return {
    runs: runs.filter((r) => createdIds.has(r.id)),
    resumed,
    decisions,
    held: held.filter((h) => !q.has(h.id)).length,
    waitingForWindow: decisions.filter((d) => d.outcome === 'window-closed').length,
    autoPaused: recorded.filter((u) => u.pauseReason !== null).length,
  };
}
