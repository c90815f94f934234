import { ACCOUNT_RESTRICTED, accountAdvice, COOLING_RESTRICTED, coolingWords, cannotSendReasonOf, decideSendOutcome, OUTCOME_FAILED, OUTCOME_SENT, type SendResult } from '@metronome/core';
import type { ClaimedTarget, SentSettlement, TargetSettlement } from '@metronome/db';
import type { JobDeps } from './deps.js';
import { durably, stopWith, type LaneContext } from './lane-context.js';

/** What follows one part's answer. */
export type PartNext = 'next-part' | 'stop' | SentSettlement;

/**
 * Moves a claimed target out of flight without a delivery, fenced by the lease and kept
 * through a database outage. False when the lease was lost or the write could not be made.
 */
export async function settleTarget(deps: JobDeps, ctx: LaneContext, chatId: string, settlement: TargetSettlement): Promise<boolean> {
  const written = await durably(deps, ctx, [chatId], 'settle', () => deps.targets.settle(ctx.run.runId, chatId, ctx.token, settlement, new Date(deps.clock.now())));
  return written === true;
}

/** Puts a claimed target back as pending without counting an attempt. */
export async function releaseTarget(deps: JobDeps, ctx: LaneContext, chatId: string, nextAttemptAt: number, code: string | null = null): Promise<void> {
  await settleTarget(deps, ctx, chatId, { status: 'pending', nextAttemptAt: new Date(nextAttemptAt), countAttempt: false, errorCode: code, errorMessage: null });
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
      const owned = await durably(deps, ctx, [target.chatId], 'part', () => deps.targets.recordPart(run.runId, target.chatId, ctx.token, outcome.partsSent, outcome.messageId, at));
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
        if (restricted === true) deps.events.emit('account:cooling', { accountId: run.account.id, platform: run.account.platform, reason: COOLING_RESTRICTED, until: 0, paceFactor: 1, words: coolingWords(COOLING_RESTRICTED, deps.settings.cooling) });
        return 'stop';
      }
      await durably(deps, ctx, [target.chatId], 'disconnect', () => deps.repo.accounts.disconnect(run.account.id, accountAdvice(run.account.platform, run.account.id, 'disconnected', outcome.code), at));
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
      await settleTarget(deps, ctx, target.chatId, { status: 'pending', nextAttemptAt: new Date(outcome.at), countAttempt: true, errorCode: outcome.code, errorMessage: outcome.message });
      return 'stop';
    }
    case 'settle': {
      await settleTarget(deps, ctx, target.chatId, { status: 'pending', nextAttemptAt: new Date(outcome.at), countAttempt: true, errorCode: outcome.code, errorMessage: outcome.message, ambiguous: true });
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
      const moved = (await durably(deps, ctx, [target.chatId], 'move', () => deps.targets.moveTarget(run.runId, run.campaignId, target.chatId, outcome.newChatId, ctx.token, outcome.code, at))) ?? 'lost';
      deps.events.emit('chat:moved', { ...scope, code: outcome.code, newChatId: outcome.newChatId, moved });
      return 'stop';
    }
  }
}
