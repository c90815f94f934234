import { pacedPerMinute, waitsInline } from '@metronome/core';
import type { ClaimedTarget, RunForSend, SentSettlement } from '@metronome/db';
import type { PaceFloors } from '@metronome/redis';
import type { Transport, TransportAccount } from '@metronome/transports';
import type { JobDeps } from './deps.js';
import { stopWith, waitUntil, wakeOnDrain, windowClosed, type HealthPlan, type LaneContext, type LaneReport } from './lane-context.js';
import { foldLeftAt, gapFloor, limitsOf, PaceBatches, reserveChatNow, reserveSlot, waitForSlot, wakeBefore } from './gate.js';
import { JobWrites } from './writes.js';
import { chatTextOverLimit, compileParts, followsPlatformWait, outgoingPart, sendParts, typeClaimed, typingAhead, type PreparedPart } from './parts.js';

export type { LaneReport, StopReason } from './lane-context.js';

/**
 * Sends a run's due targets with up to `lanes` chats in parallel (parts of one chat serial and
 * in order), at most `sendsPerJob` parts in all, each part paced by the account's shared GCRA.
 * A lane takes its slot first and claims at the slot: a target is held only while its request
 * goes out, and a claim that never reached the platform cannot be taken for one that did.
 * Sets `floors` to what the account's next job must wait for once the lanes have stopped.
 */
export async function runLanes(
  deps: JobDeps,
  run: RunForSend,
  account: TransportAccount,
  transport: Transport,
  token: string,
  lanes: number,
  floors: PaceFloors,
  job: { perMinute: number; planHealth: (report: LaneReport) => HealthPlan },
): Promise<LaneReport> {
  const report: LaneReport = {
    delivered: 0,
    attempts: 0,
    reserved: 0,
    stop: null,
    nextTokenAt: 0,
    blockedUntil: 0,
    capUntil: 0,
    drained: false,
    floodWaits: [],
    outcomes: '',
    progress: null,
    health: null,
    healthWritten: false,
    finished: false,
  };
  const limits = limitsOf(run, deps.clock.now());
  // Human pacing is one send after another: lanes would only wait for each other's gaps.
  if (limits?.delay) lanes = 1;
  // the pace in force: the configured one, lowered by a cooling and recovering since (the job's accountPerMinute)
  const configuredPerMinute = job.perMinute;
  const intervalMs = 60_000 / pacedPerMinute(configuredPerMinute);
  // Reservations queue the lanes one behind the other: a lane's slot is up to (lanes - 1)
  // intervals behind its siblings' before its own inline wait even starts.
  const firstPartMaxWaitMs = deps.settings.maxInlineWaitMs + (lanes - 1) * intervalMs;
  const gateMaxWaitMs = Math.max(deps.settings.maxInlineWaitMs, deps.settings.maxGateWaitMs) + (lanes - 1) * intervalMs;
  const chatPerMinute = deps.settings.chatPacePerMinute[run.account.platform] ?? 0;
  const partSpacingMs = Math.max(intervalMs, chatPerMinute > 0 ? 60_000 / chatPerMinute : 0);
  // A chat is held while it is typed to as well (parts.ts): each part may type up to maxSeconds.
  const typingMaxMs = run.account.typing ? run.account.typing.maxSeconds * 1000 : 0;
  // beyond the sends' own time, as long as the account lock lasts (SENDER_HOLD_MS, 30 s by default)
  const leaseMs =
    run.parts.length * (deps.settings.sendTimeoutMs + firstPartMaxWaitMs + partSpacingMs + deps.settings.partJitterMs + typingMaxMs) + deps.settings.lockTtlMs;
  const writes = new JobWrites(deps, { run, token, leaseMs, report });
  const ctx: LaneContext = {
    run,
    account,
    transport,
    token,
    report,
    intervalMs,
    configuredIntervalMs: 60_000 / configuredPerMinute,
    burst: deps.settings.rateBurst,
    chatPerMinute,
    firstPartMaxWaitMs,
    gateMaxWaitMs,
    partSpacingMs,
    leaseMs,
    dueTimes: run.dueTimes,
    taken: 0,
    written: { tat: 0 },
    sent: { tat: 0 },
    writing: Promise.resolve(),
    leftAt: 0,
    writes,
    sleepers: new Set(),
    lastSlotAt: 0,
    limits,
    lastWriteAt: 0,
    templates: compileParts(run.parts),
    paceBatches: new PaceBatches(deps, run.account.id, token, 60_000 / intervalMs, deps.settings.rateBurst, () => spareSlots(deps, ctx)),
    skipTypingOnce: followsPlatformWait(run.account.blockedUntil, deps.clock.now(), Math.max(1_000, deps.settings.maxInlineWaitMs)),
  };
  // Every lane ends before the job does (allSettled, not all): a lane still sending after its
  // job released the account lock would break the one-fan-out-per-account promise.
  const unsubscribe = wakeOnDrain(deps, ctx);
  const results = await Promise.allSettled(Array.from({ length: lanes }, () => lane(deps, ctx))).finally(unsubscribe);
  // what the account's next job must wait for, given to the shared pace with the lock's release
  // (withAccountLock, run-job.ts): set before the last write, so one that fails (PostgreSQL
  // gone) still hands on a request that left late
  foldLeftAt(ctx);
  floors.paceMs = paceFloor(ctx);
  floors.gapMs = gapFloor(ctx);
  // The job's last write reads the run's counts for its end, unless claims must be given back
  // first, and carries the account's health when that changed (and the account does not cool).
  report.health = job.planHealth(report);
  const last = await writes.close(report.health.kind === 'write' ? { accountId: run.account.id, write: report.health.write } : null);
  report.progress = last.progress;
  report.healthWritten = last.healthWritten;
  report.finished = last.finished;
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return report;
}

/** Slots the job may still take beyond those its lanes asked for: its budget and its due targets left. */
function spareSlots(deps: JobDeps, ctx: LaneContext): number {
  return Math.min(deps.settings.sendsPerJob - ctx.report.reserved, (ctx.dueTimes.length - ctx.taken) * ctx.run.parts.length);
}

/**
 * The earliest the account's next send may go by its pace, from when this job's requests really
 * went ahead (0: as reserved). Redis already holds the account back to the slot after the last
 * one reserved; only a job whose writes ran later than their slots has to move it, or one whose
 * lock vanished (Redis restarted empty: the account's pace went with it, and is put back before
 * the next job).
 */
function paceFloor(ctx: LaneContext): number {
  const tat = Math.max(ctx.written.tat, ctx.sent.tat);
  if (tat === 0) return 0;
  if (tat <= ctx.lastSlotAt + ctx.intervalMs && ctx.report.stop !== 'lock-lost') return 0;
  return tat;
}

/** Whether a lane may claim another target now (records why not). */
function mayClaim(deps: JobDeps, ctx: LaneContext): boolean {
  const { report } = ctx;
  if (report.stop || report.drained) return false;
  if (deps.draining.aborted) {
    stopWith(report, 'drain');
    return false;
  }
  // The budget only stops new claims: chats other lanes already hold still go out.
  if (report.reserved >= deps.settings.sendsPerJob) return false;
  // Targets the job did not load, and one due later than a lane waits in-process, are left to
  // the next job: a claim for them now would only spend a pace slot and a statement to find nothing.
  if (ctx.taken >= ctx.dueTimes.length || !waitsInline(ctx.dueTimes[ctx.taken]!, deps.clock.now(), ctx.gateMaxWaitMs)) {
    report.drained = true;
    return false;
  }
  if (windowClosed(deps, ctx.run)) {
    stopWith(report, 'window');
    return false;
  }
  return true;
}

async function lane(deps: JobDeps, ctx: LaneContext): Promise<void> {
  const { run, report } = ctx;
  const partCount = run.parts.length;
  for (;;) {
    if (!mayClaim(deps, ctx)) return;
    // Reserve before claiming: lanes claim concurrently, and must not overshoot the budget together.
    report.reserved += partCount;
    const dueAt = ctx.dueTimes[ctx.taken++]!;
    // A chat held a little longer (its own interval) is waited for before its slot is taken,
    // so the slot is not spent early and the claim finds it due.
    if (dueAt > deps.clock.now() && !(await waitUntil(deps, ctx, dueAt))) {
      if (deps.draining.aborted) stopWith(report, 'drain');
      report.reserved -= partCount;
      return;
    }
    const first = await outgoingPart(deps, ctx, 0);
    const upload = 'failure' in first ? undefined : first.upload;
    // Typing first: the lane wakes `typing` ms before its slot, claims without stamping, and
    // types to the chat it got until the slot (parts.ts); 0 for accounts without typing.
    const typing = 'failure' in first ? 0 : typingAhead(ctx, first.part);
    let slotAt = deps.clock.now();
    if (!('failure' in first)) {
      const slot = await reserveSlot(deps, ctx, null, ctx.firstPartMaxWaitMs + typing, typing);
      if (!slot.go) {
        report.reserved -= partCount;
        await upload?.settle(null);
        return;
      }
      slotAt = slot.at;
    }
    const woke = 'failure' in first || (await (typing > 0 ? wakeBefore(deps, ctx, slotAt - typing) : waitForSlot(deps, ctx, slotAt)));
    if (!('failure' in first) && (!woke || windowClosed(deps, run))) {
      if (windowClosed(deps, run)) stopWith(report, 'window');
      if (deps.draining.aborted) stopWith(report, 'drain');
      report.reserved -= partCount;
      await upload?.settle(null);
      return;
    }
    const target = await ctx.writes.claim(!('failure' in first) && typing === 0);
    if (target === null || target === 'lost') {
      report.reserved -= partCount;
      if (target === null) report.drained = true;
      await upload?.settle(null);
      return;
    }
    report.reserved -= target.partsSent;
    let delivered: SentSettlement | null;
    try {
      delivered = await sendClaimed(deps, ctx, target, first, typing > 0 ? { ms: typing, slotAt } : null);
    } catch (error) {
      stopWith(report, 'error');
      throw error;
    }
    if (delivered) ctx.writes.delivered(delivered);
  }
}

/**
 * Sends a target claimed at its slot, its first part prepared before the claim; or, with
 * `typed`, claimed `typed.ms` before its slot, to type first.
 */
async function sendClaimed(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  first: PreparedPart,
  typed: { ms: number; slotAt: number } | null,
): Promise<SentSettlement | null> {
  const upload = 'failure' in first ? undefined : first.upload;
  const tooLong = chatTextOverLimit(
    ctx.run.parts,
    ctx.templates,
    ctx.transport.textLimits,
    { runId: ctx.run.runId, chatId: target.chatId },
    target.vars ?? null,
    target.partsSent,
  );
  if (tooLong) {
    // Longer than the platform takes once rendered for this chat: the chat fails whole, nothing sent.
    await upload?.settle(null);
    return sendParts(deps, ctx, target, target.partsSent, { failure: tooLong });
  }
  if (target.partsSent > 0) {
    // A chat some of whose parts went out earlier: its next part is not the one prepared. It
    // waits, not sending, for that part's content and slot like any later part.
    await upload?.settle(null);
    if ('failure' in first) return sendParts(deps, ctx, target, target.partsSent);
    return (await ctx.writes.markWaiting(target)) ? sendParts(deps, ctx, target, target.partsSent) : null;
  }
  if (!('failure' in first)) {
    const chat = await reserveChatNow(deps, ctx, target.chatId);
    if (!chat.ok) {
      // Only this chat's pace holds it (the account slot is spent, which only slows the account).
      await upload?.settle(null);
      await ctx.writes.release(target, chat.until);
      return null;
    }
    if (typed && !(await typeClaimed(deps, ctx, target, first, typed.ms, typed.slotAt))) return null;
  }
  return sendParts(deps, ctx, target, 0, first);
}
