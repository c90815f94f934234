import { accountAdvice, decideSendOutcome, OUTCOME_FAILED, OUTCOME_SENT, type SendResult } from '@metronome/core';
import type { ClaimedTarget, SentSettlement, TargetSettlement } from '@metronome/db';
import type { SenderDeps } from './deps.js';
import { durably, stopWith, type LaneContext } from './lane-context.js';

/** What follows one part's answer. */
export type PartNext = 'next-part' | 'stop' | SentSettlement;

/**
 * Moves a claimed target out of flight without a delivery, fenced by the lease and kept
 * through a database outage. False when the lease was lost or the write could not be made.
 */
export async function settleTarget(deps: SenderDeps, ctx: LaneContext, chatId: string, settlement: TargetSettlement): Promise<boolean> {
  const written = await durably(deps, ctx, [chatId], 'settle', () => deps.targets.settle(ctx.run.runId, chatId, ctx.token, settlement, new Date(deps.clock.now())));
  return written === true;
}

/** Puts a claimed target back as pending without counting an attempt. */
export async function releaseTarget(deps: SenderDeps, ctx: LaneContext, chatId: string, nextAttemptAt: number, code: string | null = null): Promise<void> {
  await settleTarget(deps, ctx, chatId, { status: 'pending', nextAttemptAt: new Date(nextAttemptAt), countAttempt: false, errorCode: code, errorMessage: null });
}

/**
 * Records one part's answer: 'next-part' when the chat's next part may follow, 'stop' when the
 * chat is done for this job, or the `sent` settlement of a chat whose last part was delivered
 * (left to the lane, which writes it with its next claim or at once). What the answer means is
 * decided in libs/core (decideSendOutcome); this applies it: writes, metrics, log lines.
 */
export async function applyResult(
  deps: SenderDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  result: SendResult,
  firstPartStartedAt: number,
): Promise<PartNext> {
  const { run, report } = ctx;
  const platform = run.account.platform;
  const now = deps.clock.now();
  const at = new Date(now);
  // Built only when a line is written: a delivered part (the common case) logs nothing.
  const log = () => deps.logger.child({ runId: run.runId, accountId: run.account.id, chatId: target.chatId, partIndex: index });
  const outcome = decideSendOutcome(result, {
    attempts: target.attempts,
    partIndex: index,
    partCount: run.parts.length,
    now,
    firstPartStartedAt,
    blockedUntil: report.blockedUntil,
    maxRetries: deps.settings.maxRetries,
    random: deps.random,
  });
  switch (outcome.kind) {
    case 'sent-last': {
      deps.metrics.sends.inc({ platform, result: 'sent' });
      report.delivered++;
      report.outcomes += OUTCOME_SENT;
      return { chatId: target.chatId, at, latencyMs: outcome.latencyMs, partsSent: outcome.partsSent, messageId: outcome.messageId };
    }
    case 'next-part': {
      deps.metrics.sends.inc({ platform, result: 'sent' });
      report.delivered++;
      const owned = await durably(deps, ctx, [target.chatId], 'part', () => deps.targets.recordPart(run.runId, target.chatId, ctx.token, outcome.partsSent, outcome.messageId, at));
      if (!owned) log().warn('delivered, but the target lease was lost meanwhile: result not recorded');
      return owned ? 'next-part' : 'stop';
    }
    case 'account-wait': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      deps.metrics.providerWait.inc({ scope: 'account' }, outcome.retryAfterMs / 1000);
      if (outcome.floodWait) report.floodWaits.push(now);
      report.blockedUntil = outcome.blockedUntil;
      stopWith(report, 'account-wait');
      await durably(deps, ctx, [target.chatId], 'flood wait', () => deps.repo.blockAccount(run.account.id, new Date(outcome.until), at));
      log().warn({ code: outcome.code, retryAfterMs: outcome.retryAfterMs }, 'account must wait: no send from it until the wait ends');
      await releaseTarget(deps, ctx, target.chatId, outcome.until, outcome.code);
      return 'stop';
    }
    case 'chat-wait': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      deps.metrics.providerWait.inc({ scope: 'chat' }, outcome.retryAfterMs / 1000);
      log().info({ code: outcome.code, retryAfterMs: outcome.retryAfterMs }, 'chat must wait; other chats go on');
      await releaseTarget(deps, ctx, target.chatId, outcome.until, outcome.code);
      return 'stop';
    }
    case 'stop-account': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      stopWith(report, 'account-unavailable');
      log().warn({ code: outcome.code }, 'account unavailable: disconnected, its runs paused');
      await releaseTarget(deps, ctx, target.chatId, outcome.releaseAt, outcome.code);
      await durably(deps, ctx, [target.chatId], 'disconnect', () => deps.repo.disconnectAccount(run.account.id, accountAdvice(platform, run.account.id, 'disconnected', outcome.code), at));
      return 'stop';
    }
    case 'fail': {
      deps.metrics.sends.inc({ platform, result: 'failed' });
      if (outcome.because === 'rejected') log().warn({ code: outcome.code, err: outcome.message }, 'send failed permanently for this chat');
      else log().warn({ code: outcome.code, err: outcome.message, attempts: outcome.attempts }, 'send failed: retries exhausted');
      report.outcomes += OUTCOME_FAILED;
      await settleTarget(deps, ctx, target.chatId, { status: 'failed', errorCode: outcome.code, errorMessage: outcome.message, countAttempt: true });
      if (outcome.suppress) {
        // Best effort: a chat not listed now is listed by its next refusal.
        await deps.repo.suppress(run.account.id, target.chatId, outcome.code, at).catch((error: unknown) => log().warn({ err: error }, 'chat not added to the suppression list'));
      }
      return 'stop';
    }
    case 'retry': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      log().warn({ code: outcome.code, err: outcome.message, attempts: outcome.attempts }, 'send failed: will retry');
      await settleTarget(deps, ctx, target.chatId, { status: 'pending', nextAttemptAt: new Date(outcome.at), countAttempt: true, errorCode: outcome.code, errorMessage: outcome.message });
      return 'stop';
    }
    case 'unknown': {
      deps.metrics.sends.inc({ platform, result: 'unknown' });
      log().warn({ code: outcome.code, err: outcome.message }, 'send outcome unknown: not retried automatically');
      await settleTarget(deps, ctx, target.chatId, { status: 'unknown', errorCode: outcome.code, errorMessage: outcome.message, countAttempt: true });
      return 'stop';
    }
    case 'chat-moved': {
      // Not delivered: the chat lives under a new id. The target is renamed (here and in the
      // campaign's targets) and due at once, no attempt counted; if the new id is already a
      // target of this run, this one is skipped so that chat gets the message once.
      deps.metrics.sends.inc({ platform, result: 'retry' });
      const moved = (await durably(deps, ctx, [target.chatId], 'move', () => deps.repo.moveTarget(run.runId, run.campaignId, target.chatId, outcome.newChatId, ctx.token, outcome.code, at))) ?? 'lost';
      if (moved === 'lost') log().warn('chat moved, but the target lease was lost meanwhile: not renamed');
      else log().info({ code: outcome.code, newChatId: outcome.newChatId, moved }, moved === 'moved' ? 'chat moved: target renamed, sent again at once' : 'chat moved to a chat already targeted: skipped');
      return 'stop';
    }
  }
}
