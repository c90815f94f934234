import {
  ACCOUNT_RESTRICTED,
  accountAdvice,
  COOLING_RESTRICTED,
  coolingWords,
  cannotSendReasonOf,
  decideSendOutcome,
  OUTCOME_FAILED,
  OUTCOME_SENT,
  type SendResult,
  type StillPending,
} from '@metronome/core';
import { isTransientDbError, type ClaimedTarget, type HealthWrite, type RunProgress, type SentSettlement, type TargetSettlement } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { GroupCommit } from './group-commit.js';
import { durably, leaseLost, stopWith, type LaneContext } from './lane-context.js';

// The job's writes to its targets: the claim (ClaimBatches, one statement for the lanes that
// claim together), the deliveries (PendingAnswers, riding on the next claim or written alone),
// and the settlement of one part's answer (applyResult, releaseTarget). The job's last write
// (the close, PendingAnswers.close) carries the last deliveries and reads the run's counts.

/** What a lane's claim came back with: a target, none due (the run is drained), or `lost` (the statement's answer was lost). */
export type LaneClaim = ClaimedTarget | null | 'lost';

/**
 * The job's claims, one at a time (group commit). A lane at its slot claims at once when no
 * claim of the job is out; lanes that reach their slots while one is out wait for it, then
 * claim together in the next: one claim takes a target for each of them and carries every
 * answer the job holds. Each claim of the job goes in the sender's next claim statement, which
 * its other jobs share (claim-statements.ts). At a pace of many sends a second, the lanes' slots are
 * a millisecond apart and a statement takes longer than that, so several lanes share each
 * statement; at a slow pace every lane claims alone, as before. No lane claims before its slot,
 * and a lane waits at most one statement longer than it would alone. Each claimed target still
 * belongs to one lane, which writes its request at once (spaceWrite keeps requests that a
 * batch released together one configured interval apart), so a crash leaves at most one
 * `unknown` per lane, as before.
 *
 * Claims that stamp their sends (`sending`) and claims that do not (typing first) are never
 * mixed in one statement.
 */
export class ClaimBatches {
  private readonly claims: GroupCommit<boolean, LaneClaim>;

  constructor(
    private readonly deps: JobDeps,
    private readonly ctx: LaneContext,
    private readonly answers: PendingAnswers,
  ) {
    this.claims = new GroupCommit(async (sending, lanes) => {
      const count = lanes.length;
      // after a claim whose answer was lost, no lane claims again in this job
      const claimed = this.ctx.claimLost ? 'lost' : await this.statement(count, sending);
      return Array.from({ length: count }, (_, i) => (claimed === 'lost' ? 'lost' : (claimed[i] ?? null)));
    });
  }

  /** Claims one due target for a lane at its slot; rejects on a database error that is not transient. */
  claim(sending: boolean): Promise<LaneClaim> {
    return this.claims.ask(sending);
  }

  /** The job's claim for `limit` lanes, carrying every answer held, in the sender's next claim statement. */
  private async statement(limit: number, sending: boolean): Promise<ClaimedTarget[] | 'lost'> {
    const { deps, ctx } = this;
    const carried = this.answers.take();
    let claim: Awaited<ReturnType<typeof deps.claims.claim>>;
    try {
      claim = await deps.claims.claim(sending, {
        runId: ctx.run.runId,
        owner: ctx.token,
        sent: carried,
        leaseMs: ctx.leaseMs,
        firstSendKnown: ctx.run.firstSendAt !== null,
        limit,
      });
    } catch (error) {
      if (!isTransientDbError(error)) throw error;
      // The claim may have committed (see runLanes); its answers wait for the job's last write.
      this.answers.add(...carried);
      stopWith(ctx.report, 'storage');
      ctx.claimLost = true;
      deps.events.emit('claim:lost', { runId: ctx.run.runId, error });
      return 'lost';
    }
    for (const d of carried) if (!claim.settled.has(d.chatId)) leaseLost(deps, ctx, d.chatId);
    const now = claim.at;
    for (const target of claim.claimed) ctx.leases.set(target.chatId, now + ctx.leaseMs);
    if (claim.firstSend) {
      ctx.run.firstSendAt = new Date(now);
      deps.events.emit('run:first-send', { runId: ctx.run.runId, trigger: ctx.run.trigger, lagMs: now - ctx.run.scheduledAt.getTime() });
    }
    return claim.claimed;
  }
}

/**
 * A delivered chat's `sent` rides on the job's next claim, whichever lane makes it (one
 * statement for both), when a claim comes within this long; otherwise it is written without
 * one, so an answer never waits out a pace interval in memory, where a crash would lose it.
 */
const ANSWER_MAX_HOLD_MS = 100;

/**
 * The job's delivered chats not yet written as `sent`. The next claim of any lane carries them
 * all in its statement; when none comes within ANSWER_MAX_HOLD_MS of the oldest (the next slot
 * is further, or the lanes have stopped), they go together in the sender's next claim
 * statement as a claim of no target (writeSent): an answer held in memory is one a crash would
 * lose.
 */
export class PendingAnswers {
  private readonly answers: SentSettlement[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly writes: Promise<unknown>[] = [];

  constructor(
    private readonly deps: JobDeps,
    private readonly ctx: LaneContext,
  ) {}

  add(...answers: SentSettlement[]): void {
    if (answers.length === 0) return;
    this.answers.push(...answers);
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.writes.push(this.flush());
    }, ANSWER_MAX_HOLD_MS);
  }

  /** Every answer held, for a claim statement to carry (a claim whose answer is lost gives them back). */
  take(): SentSettlement[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return this.answers.splice(0);
  }

  /**
   * Once every lane has stopped: writes what is left and, with `count`, reads the run's counts
   * in the same statement (null when not read: the job reads them itself), carrying `health`
   * (`healthWritten`: it was written). Rethrows a write that failed for good.
   */
  async close(
    count: boolean,
    health: { accountId: string; write: HealthWrite } | null,
  ): Promise<{ progress: RunProgress | StillPending | null; healthWritten: boolean }> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const earlier = await Promise.allSettled(this.writes);
    const batch = this.answers.splice(0);
    let progress: RunProgress | StillPending | null = null;
    if (!count) {
      if (batch.length > 0) await writeSent(this.deps, this.ctx, batch);
    } else {
      const { run, token } = this.ctx;
      const write = () => this.deps.targets.settleSentAndCount(run.runId, token, batch, new Date(this.deps.clock.now()), health);
      // an answer is written through an outage; a count alone is not worth waiting for
      const result =
        batch.length > 0
          ? await durably(
              this.deps,
              this.ctx,
              batch.map((d) => d.chatId),
              'sent',
              write,
            )
          : await write();
      for (const d of result ? batch : []) if (!result!.settled.has(d.chatId)) leaseLost(this.deps, this.ctx, d.chatId);
      progress = result?.progress ?? null;
    }
    const failed = earlier.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return { progress, healthWritten: health !== null && progress !== null };
  }

  private async flush(): Promise<void> {
    const batch = this.answers.splice(0);
    if (batch.length > 0) await writeSent(this.deps, this.ctx, batch);
  }
}

/**
 * Writes delivered chats as `sent`, through a database outage if need be. They go in the
 * sender's next claim statement as a claim of no target (limit 0), so they share its round
 * trip and commit with the claims of the sender's other jobs. As statements of their own they
 * came at the end of most jobs on a busy machine, the job's lanes stopped and their last
 * answers slow to come (687–1,044 such statements for 1,320 jobs in a `throughput` run;
 * docs/BENCHMARKS.md, "Where the machine's CPU goes during the sends").
 */
async function writeSent(deps: JobDeps, ctx: LaneContext, sent: SentSettlement[]): Promise<void> {
  const chatIds = sent.map((d) => d.chatId);
  const write = () => deps.claims.claim(true, { runId: ctx.run.runId, owner: ctx.token, sent, leaseMs: ctx.leaseMs, firstSendKnown: true, limit: 0 });
  const written = await durably(deps, ctx, chatIds, 'sent', write);
  if (!written) return;
  for (const d of sent) if (!written.settled.has(d.chatId)) leaseLost(deps, ctx, d.chatId);
}

/** What follows one part's answer. */
export type PartNext = 'next-part' | 'stop' | SentSettlement;

/**
 * Moves a claimed target out of flight without a delivery, fenced by the lease and kept
 * through a database outage. False when the lease was lost or the write could not be made.
 */
export async function settleTarget(deps: JobDeps, ctx: LaneContext, chatId: string, settlement: TargetSettlement): Promise<boolean> {
  const written = await durably(deps, ctx, [chatId], 'settle', () =>
    deps.targets.settle(ctx.run.runId, chatId, ctx.token, settlement, new Date(deps.clock.now())),
  );
  return written === true;
}

/** Puts a claimed target back as pending without counting an attempt. */
export async function releaseTarget(deps: JobDeps, ctx: LaneContext, chatId: string, nextAttemptAt: number, code: string | null = null): Promise<void> {
  await settleTarget(deps, ctx, chatId, {
    status: 'pending',
    nextAttemptAt: new Date(nextAttemptAt),
    countAttempt: false,
    errorCode: code,
    errorMessage: null,
  });
}

/**
 * Records one part's answer: 'next-part' when the chat's next part may follow, 'stop' when the
 * chat is done for this job, or the `sent` settlement of a chat whose last part was delivered
 * (left to the lane, which writes it with its next claim or at once). What the answer means is
 * decided in libs/core (decideSendOutcome); this applies it: writes, and events for the
 * metrics and log lines (sender-events.ts).
 */
export async function applyResult(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  result: SendResult,
  firstPartStartedAt: number,
): Promise<PartNext> {
  const { run, report } = ctx;
  const now = deps.clock.now();
  const at = new Date(now);
  const scope = { runId: run.runId, accountId: run.account.id, chatId: target.chatId, partIndex: index };
  const outcome = decideSendOutcome(result, {
    attempts: target.attempts,
    partIndex: index,
    partCount: run.parts.length,
    now,
    firstPartStartedAt,
    blockedUntil: report.blockedUntil,
    maxRetries: deps.settings.maxRetries,
    random: deps.random,
    platformDeduplicates: run.account.platformDeduplicates,
  });
  deps.events.emit('send:result', { ...scope, platform: run.account.platform, outcome });
  switch (outcome.kind) {
    case 'sent-last': {
      report.delivered++;
      report.outcomes += OUTCOME_SENT;
      if (target.settling) deps.events.emit('send:settled', { ...scope, platform: run.account.platform });
      return { chatId: target.chatId, at, latencyMs: outcome.latencyMs, partsSent: outcome.partsSent, messageId: outcome.messageId };
    }
    case 'next-part': {
      report.delivered++;
      const owned = await durably(deps, ctx, [target.chatId], 'part', () =>
        deps.targets.recordPart(run.runId, target.chatId, ctx.token, outcome.partsSent, outcome.messageId, at),
      );
      if (!owned) deps.events.emit('lease:lost', scope);
      return owned ? 'next-part' : 'stop';
    }
    case 'account-wait': {
      if (outcome.floodWait) report.floodWaits.push(now);
      report.blockedUntil = outcome.blockedUntil;
      stopWith(report, 'account-wait');
      await durably(deps, ctx, [target.chatId], 'flood wait', () => deps.repo.accounts.block(run.account.id, new Date(outcome.until), at));
      deps.events.emit('account:blocked', { ...scope, code: outcome.code, retryAfterMs: outcome.retryAfterMs });
      await releaseTarget(deps, ctx, target.chatId, outcome.until, outcome.code);
      return 'stop';
    }
    case 'chat-wait': {
      await releaseTarget(deps, ctx, target.chatId, outcome.until, outcome.code);
      return 'stop';
    }
    case 'stop-account': {
      stopWith(report, 'account-unavailable');
      await releaseTarget(deps, ctx, target.chatId, outcome.releaseAt, outcome.code);
      if (outcome.code === ACCOUNT_RESTRICTED) {
        // Not disconnected: restricted (cooling without an end) until an operator lifts it.
        const restricted = await durably(deps, ctx, [target.chatId], 'restrict', () => deps.cooling.restrict(run.account.id, at));
        if (restricted === true)
          deps.events.emit('account:cooling', {
            accountId: run.account.id,
            platform: run.account.platform,
            reason: COOLING_RESTRICTED,
            until: 0,
            paceFactor: 1,
            words: coolingWords(COOLING_RESTRICTED, deps.settings.cooling),
          });
        return 'stop';
      }
      await durably(deps, ctx, [target.chatId], 'disconnect', () =>
        deps.repo.accounts.disconnect(run.account.id, accountAdvice(run.account.platform, run.account.id, 'disconnected', outcome.code), at),
      );
      return 'stop';
    }
    case 'fail': {
      report.outcomes += OUTCOME_FAILED;
      await settleTarget(deps, ctx, target.chatId, { status: 'failed', errorCode: outcome.code, errorMessage: outcome.message, countAttempt: true });
      // The chat joins the suppression list and its directory entry cannot send: one statement.
      const reason = cannotSendReasonOf(outcome.code);
      if (outcome.suppress || reason !== null) {
        // Best effort: a chat not listed now is listed by its next refusal.
        await deps.repo.accounts
          .chatRefused(run.account.id, target.chatId, outcome.code, { suppress: outcome.suppress, reason }, at)
          .catch((error: unknown) => deps.events.emit('chat:suppress-failed', { ...scope, error }));
      }
      return 'stop';
    }
    case 'retry': {
      await settleTarget(deps, ctx, target.chatId, {
        status: 'pending',
        nextAttemptAt: new Date(outcome.at),
        countAttempt: true,
        errorCode: outcome.code,
        errorMessage: outcome.message,
      });
      return 'stop';
    }
    case 'settle': {
      await settleTarget(deps, ctx, target.chatId, {
        status: 'pending',
        nextAttemptAt: new Date(outcome.at),
        countAttempt: true,
        errorCode: outcome.code,
        errorMessage: outcome.message,
        ambiguous: true,
      });
      return 'stop';
    }
    case 'unknown': {
      await settleTarget(deps, ctx, target.chatId, { status: 'unknown', errorCode: outcome.code, errorMessage: outcome.message, countAttempt: true });
      return 'stop';
    }
    case 'chat-moved': {
      // Not delivered: the chat lives under a new id. The target is renamed (here and in the
      // campaign's targets) and due at once, no attempt counted; if the new id is already a
      // target of this run, this one is skipped so that chat gets the message once.
      const moved =
        (await durably(deps, ctx, [target.chatId], 'move', () =>
          deps.targets.moveTarget(run.runId, run.campaignId, target.chatId, outcome.newChatId, ctx.token, outcome.code, at),
        )) ?? 'lost';
      deps.events.emit('chat:moved', { ...scope, code: outcome.code, newChatId: outcome.newChatId, moved });
      return 'stop';
    }
  }
}
