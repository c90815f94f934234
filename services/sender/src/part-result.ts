import { accountAdvice, isFloodWait, OUTCOME_FAILED, OUTCOME_SENT, retryDelayMs, suppresses, type SendResult } from '@metronome/core';
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
 * (left to the lane, which writes it with its next claim or at once).
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
  switch (result.kind) {
    case 'delivered': {
      deps.metrics.sends.inc({ platform, result: 'sent' });
      report.delivered++;
      if (index === run.parts.length - 1) {
        report.outcomes += OUTCOME_SENT;
        return { chatId: target.chatId, at, latencyMs: Math.round(now - firstPartStartedAt), partsSent: index + 1, messageId: result.messageId };
      }
      const owned = await durably(deps, ctx, [target.chatId], 'part', () => deps.targets.recordPart(run.runId, target.chatId, ctx.token, index + 1, result.messageId, at));
      if (!owned) log().warn('delivered, but the target lease was lost meanwhile: result not recorded');
      return owned ? 'next-part' : 'stop';
    }
    case 'account-wait': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      deps.metrics.providerWait.inc({ scope: 'account' }, result.retryAfterMs / 1000);
      const until = now + result.retryAfterMs;
      // one wait, however many lanes hear of it: another answer inside a wait already heard is the same wait
      // (a connection hand-over between our replicas is no judgement of the account's pace)
      if (now >= report.blockedUntil && isFloodWait(result.code)) report.floodWaits.push(now);
      report.blockedUntil = Math.max(report.blockedUntil, until);
      stopWith(report, 'account-wait');
      await durably(deps, ctx, [target.chatId], 'flood wait', () => deps.repo.blockAccount(run.account.id, new Date(until), at));
      log().warn({ code: result.code, retryAfterMs: result.retryAfterMs }, 'account must wait: no send from it until the wait ends');
      await releaseTarget(deps, ctx, target.chatId, until, result.code);
      return 'stop';
    }
    case 'chat-wait': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      deps.metrics.providerWait.inc({ scope: 'chat' }, result.retryAfterMs / 1000);
      log().info({ code: result.code, retryAfterMs: result.retryAfterMs }, 'chat must wait; other chats go on');
      await releaseTarget(deps, ctx, target.chatId, now + result.retryAfterMs, result.code);
      return 'stop';
    }
    case 'account-unavailable': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      stopWith(report, 'account-unavailable');
      log().warn({ code: result.code }, 'account unavailable: disconnected, its runs paused');
      await releaseTarget(deps, ctx, target.chatId, now, result.code);
      await durably(deps, ctx, [target.chatId], 'disconnect', () => deps.repo.disconnectAccount(run.account.id, accountAdvice(platform, run.account.id, 'disconnected', result.code), at));
      return 'stop';
    }
    case 'rejected': {
      deps.metrics.sends.inc({ platform, result: 'failed' });
      log().warn({ code: result.code, err: result.message }, 'send failed permanently for this chat');
      report.outcomes += OUTCOME_FAILED;
      await settleTarget(deps, ctx, target.chatId, { status: 'failed', errorCode: result.code, errorMessage: result.message, countAttempt: true });
      if (suppresses(result.code)) {
        // Best effort: a chat not listed now is listed by its next refusal.
        await deps.repo.suppress(run.account.id, target.chatId, result.code, at).catch((error: unknown) => log().warn({ err: error }, 'chat not added to the suppression list'));
      }
      return 'stop';
    }
    case 'retriable': {
      const attempts = target.attempts + 1;
      const exhausted = attempts >= deps.settings.maxRetries;
      deps.metrics.sends.inc({ platform, result: exhausted ? 'failed' : 'retry' });
      log().warn({ code: result.code, err: result.message, attempts }, exhausted ? 'send failed: retries exhausted' : 'send failed: will retry');
      if (exhausted) report.outcomes += OUTCOME_FAILED;
      await settleTarget(
        deps,
        ctx,
        target.chatId,
        exhausted
          ? { status: 'failed', errorCode: result.code, errorMessage: result.message, countAttempt: true }
          : { status: 'pending', nextAttemptAt: new Date(now + retryDelayMs(attempts, deps.random)), countAttempt: true, errorCode: result.code, errorMessage: result.message },
      );
      return 'stop';
    }
    case 'ambiguous': {
      deps.metrics.sends.inc({ platform, result: 'unknown' });
      log().warn({ code: result.code, err: result.message }, 'send outcome unknown: not retried automatically');
      await settleTarget(deps, ctx, target.chatId, { status: 'unknown', errorCode: result.code, errorMessage: result.message, countAttempt: true });
      return 'stop';
    }
    case 'chat-moved': {
      // Not delivered: the chat lives under a new id. The target is renamed (here and in the
      // campaign's targets) and due at once, no attempt counted; if the new id is already a
      // target of this run, this one is skipped so that chat gets the message once.
      deps.metrics.sends.inc({ platform, result: 'retry' });
      const moved = (await durably(deps, ctx, [target.chatId], 'move', () => deps.repo.moveTarget(run.runId, run.campaignId, target.chatId, result.newChatId, ctx.token, result.code, at))) ?? 'lost';
      if (moved === 'lost') log().warn('chat moved, but the target lease was lost meanwhile: not renamed');
      else log().info({ code: result.code, newChatId: result.newChatId, moved }, moved === 'moved' ? 'chat moved: target renamed, sent again at once' : 'chat moved to a chat already targeted: skipped');
      return 'stop';
    }
  }
}
