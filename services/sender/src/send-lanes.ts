import { accountAdvice, MEDIA_REF_INVALID, retryDelayMs, type SendFailure, type SendResult } from '@metronome/core';
import type { ClaimedTarget, RunForSend, SentSettlement } from '@metronome/db';
import type { OutgoingPart, Transport, TransportAccount } from '@metronome/transports';
import type { SenderDeps } from './deps.js';
import type { MediaUpload } from './media-refs.js';

/** Why a job's lanes stopped before running out of due targets. */
export type StopReason = 'window' | 'pace' | 'account-wait' | 'account-unavailable' | 'lock-lost' | 'error';

/** What the lanes of one job did, for the job's end-of-job decision. */
export interface LaneReport {
  delivered: number;
  attempts: number;
  /** parts claimed so far (the SENDS_PER_JOB budget is spent at claim time, so lanes cannot overshoot it together) */
  reserved: number;
  stop: StopReason | null;
  /** when the pace next allows a send (set when a lane yielded for pace) */
  nextTokenAt: number;
  /** when a flood wait ends (set on account-wait) */
  blockedUntil: number;
  /** a lane found no due pending target: the others stop claiming too (their claims would come back empty) */
  drained: boolean;
}

interface LaneContext {
  run: RunForSend;
  account: TransportAccount;
  transport: Transport;
  token: string;
  perMinute: number;
  report: LaneReport;
  /** each stopped lane's last delivered chat, written together once every lane has stopped */
  leftovers: SentSettlement[];
  /** the furthest ahead a first part may reserve its pace slot */
  firstPartMaxWaitMs: number;
  /** the longest pace interval a part may wait for (account or, on platforms with one, chat) */
  partSpacingMs: number;
}

// Hard stops end a chat mid-way (its later parts wait); soft stops let a started chat finish
// its parts, so a chat's parts stay together.
const HARD_STOPS: ReadonlySet<StopReason> = new Set(['window', 'account-wait', 'account-unavailable', 'lock-lost', 'error']);

/**
 * Sends a run's due targets with up to `lanes` chats in parallel (parts of one chat serial and
 * in order), at most `sendsPerJob` parts in all, each part paced by the account's shared GCRA.
 */
export async function runLanes(
  deps: SenderDeps,
  run: RunForSend,
  account: TransportAccount,
  transport: Transport,
  token: string,
  lanes: number,
): Promise<LaneReport> {
  const report: LaneReport = { delivered: 0, attempts: 0, reserved: 0, stop: null, nextTokenAt: 0, blockedUntil: 0, drained: false };
  const perMinute = run.account.maxSendPerMinute ?? deps.settings.defaultMaxSendPerMinute;
  // Reservations queue the lanes one behind the other: a lane's slot is up to (lanes - 1)
  // intervals behind its siblings' before its own inline wait even starts.
  const firstPartMaxWaitMs = deps.settings.maxInlineWaitMs + (lanes - 1) * (60_000 / perMinute);
  const chatPerMinute = deps.settings.chatPacePerMinute[run.account.platform] ?? 0;
  const partSpacingMs = Math.max(60_000 / perMinute, chatPerMinute > 0 ? 60_000 / chatPerMinute : 0);
  const ctx: LaneContext = { run, account, transport, token, perMinute, report, leftovers: [], firstPartMaxWaitMs, partSpacingMs };
  // Every lane ends before the job does (allSettled, not all): a lane still sending after its
  // job released the account lock would break the one-fan-out-per-account promise.
  const results = await Promise.allSettled(Array.from({ length: lanes }, () => lane(deps, ctx)));
  // Lanes stop within one send of each other (budget, drain or a stop), so holding their last
  // deliveries until then keeps at most one unwritten chat per lane, as when each lane wrote
  // its own, for one round trip instead of one per lane.
  if (ctx.leftovers.length > 0) {
    const written = await deps.repo.settleSentMany(run.runId, token, ctx.leftovers, new Date(deps.clock.now()));
    for (const d of ctx.leftovers) if (!written.has(d.chatId)) leaseLost(deps, ctx, d.chatId);
  }
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
  return report;
}

function stopWith(report: LaneReport, reason: StopReason): void {
  // the first hard stop wins over soft ones
  if (report.stop === null || (!HARD_STOPS.has(report.stop) && HARD_STOPS.has(reason))) report.stop = reason;
}

function windowClosed(deps: SenderDeps, run: RunForSend): boolean {
  return run.windowEndAt !== null && deps.clock.now() >= run.windowEndAt.getTime();
}

async function lane(deps: SenderDeps, ctx: LaneContext): Promise<void> {
  const { run, report } = ctx;
  const partCount = run.parts.length;
  // A delivered chat whose `sent` is written together with the next claim (one round trip).
  let delivered: SentSettlement | null = null;
  try {
    for (;;) {
      if (report.stop || report.drained) return;
      // The budget only stops new claims: chats other lanes already hold still go out.
      if (report.reserved >= deps.settings.sendsPerJob) return;
      if (windowClosed(deps, run)) return stopWith(report, 'window');
      const now = deps.clock.now();
      const leaseMs = partCount * (deps.settings.sendTimeoutMs + ctx.firstPartMaxWaitMs + ctx.partSpacingMs + deps.settings.partJitterMs) + 30_000;
      // Reserve before claiming: lanes claim concurrently, and must not overshoot the budget together.
      report.reserved += partCount;
      const claim = await deps.repo.settleSentAndClaim(run.runId, ctx.token, delivered, new Date(now), new Date(now + leaseMs));
      if (delivered && !claim.settled) leaseLost(deps, ctx, delivered.chatId);
      delivered = null;
      const target = claim.next;
      if (!target) {
        report.reserved -= partCount;
        report.drained = true;
        return;
      }
      report.reserved -= target.partsSent;
      try {
        delivered = await sendTarget(deps, ctx, target);
      } catch (error) {
        stopWith(report, 'error');
        throw error;
      }
    }
  } finally {
    // Every exit path hands the last delivery to runLanes, which writes them all at once.
    if (delivered) ctx.leftovers.push(delivered);
  }
}

function leaseLost(deps: SenderDeps, ctx: LaneContext, chatId: string): void {
  deps.logger.warn({ runId: ctx.run.runId, accountId: ctx.run.account.id, chatId }, 'delivered, but the target lease was lost meanwhile: result not recorded');
}

/** Puts a claimed target back as pending without counting an attempt. */
async function release(deps: SenderDeps, ctx: LaneContext, chatId: string, nextAttemptAt: number, code: string | null = null): Promise<void> {
  await deps.repo.settle(
    ctx.run.runId,
    chatId,
    ctx.token,
    { status: 'pending', nextAttemptAt: new Date(nextAttemptAt), countAttempt: false, errorCode: code, errorMessage: null },
    new Date(deps.clock.now()),
  );
}

/** What a lane does after asking the pace for a slot. */
type TokenResult = { go: true } | { go: false; chatWaitUntil?: number };

/**
 * Reserves a pace slot for one part and sleeps until it. A first part only takes a slot within
 * firstPartMaxWaitMs (else the lane yields: the target goes back, for the whole account or, when
 * only this chat's pace is the limit, for this chat); a later part of a started chat always does.
 */
async function takeToken(deps: SenderDeps, ctx: LaneContext, chatId: string, firstPart: boolean): Promise<TokenResult> {
  const { report } = ctx;
  if (report.stop && (firstPart || HARD_STOPS.has(report.stop))) return { go: false };
  // Jitter between the parts of one chat, before the reservation so the slot is fresh.
  if (!firstPart && deps.settings.partJitterMs > 0) await deps.sleep(deps.random() * deps.settings.partJitterMs);
  const now = deps.clock.now();
  const chat = { chatId, perMinute: deps.settings.chatPacePerMinute[ctx.run.account.platform] ?? 0 };
  const result = await deps.pace.reserve(
    ctx.run.account.id,
    ctx.token,
    now,
    ctx.perMinute,
    deps.settings.rateBurst,
    chat,
    firstPart ? ctx.firstPartMaxWaitMs : Number.MAX_SAFE_INTEGER,
  );
  if ('lockLost' in result) {
    stopWith(report, 'lock-lost');
    return { go: false };
  }
  if (!result.reserved) {
    if (result.limitedBy === 'chat') return { go: false, chatWaitUntil: now + result.waitMs };
    report.nextTokenAt = Math.max(report.nextTokenAt, now + result.waitMs);
    stopWith(report, 'pace');
    return { go: false };
  }
  if (result.waitMs > 0) await deps.sleep(result.waitMs);
  // The slot is ours, but a hard stop meanwhile (window, flood wait, lock lost) still wins.
  if (report.stop && HARD_STOPS.has(report.stop)) return { go: false };
  return { go: true };
}

/** Sends a claimed target's parts; returns its `sent` settlement when the last part was delivered (the caller writes it). */
async function sendTarget(deps: SenderDeps, ctx: LaneContext, target: ClaimedTarget): Promise<SentSettlement | null> {
  const { run, report } = ctx;
  const partCount = run.parts.length;
  let firstPartStartedAt = 0;
  for (let index = target.partsSent; index < partCount; index++) {
    const firstOfClaim = index === target.partsSent;
    // The part before its pace slot: lanes waiting for one media upload are released together,
    // and would go out back to back on slots reserved before the wait; reserving after it keeps
    // them at the pace.
    let part: Awaited<ReturnType<typeof outgoingPart>>;
    try {
      part = await outgoingPart(deps, ctx, index);
    } catch (error) {
      // Nothing was handed to the platform: the target goes back to pending (best effort; if
      // the database is what failed, its lease expiring makes it `unknown`, never lost).
      await release(deps, ctx, target.chatId, deps.clock.now()).catch(() => undefined);
      throw error;
    }
    // A lane that took a media's first upload and does not send hands it to the next lane.
    const upload = 'failure' in part ? undefined : part.upload;
    let result: SendResult;
    const startedAt = deps.clock.now();
    if ('failure' in part) {
      // Nothing to send (media missing or its upload refused): no pace slot is spent on it.
      result = part.failure;
    } else {
      const token = await takeToken(deps, ctx, target.chatId, firstOfClaim);
      if (!token.go || windowClosed(deps, run)) {
        if (token.go) stopWith(report, 'window');
        await upload?.settle(null);
        await release(deps, ctx, target.chatId, (!token.go && token.chatWaitUntil) || deps.clock.now());
        return null;
      }
      const sendAt = deps.clock.now();
      try {
        if (!run.firstSendAt && (await deps.repo.stampFirstSend(run.runId, new Date(sendAt)))) {
          run.firstSendAt = new Date(sendAt);
          deps.metrics.runStartLag.observe({ trigger: run.trigger }, Math.max(0, sendAt - run.scheduledAt.getTime()) / 1000);
        }
      } catch (error) {
        await upload?.settle(null).catch(() => undefined);
        await release(deps, ctx, target.chatId, deps.clock.now()).catch(() => undefined);
        throw error;
      }
      if (firstOfClaim) firstPartStartedAt = sendAt;
      result = await ctx.transport.send(ctx.account, {
        chatId: target.chatId,
        part: part.part,
        partIndex: index,
        partCount,
        idempotencyKey: `${run.runId}:${target.chatId}:${index}`,
      });
      if (upload) await reportUpload(deps, ctx, target.chatId, index, upload, result);
      const sent = run.parts[index]!;
      if (result.kind === 'rejected' && result.code === MEDIA_REF_INVALID && part.part.type === 'media' && !upload && sent.type === 'media') {
        // The platform no longer knows the reference: forget it and retry, which uploads again.
        await deps.media.forget(ctx.account.id, sent.mediaId, part.part.mediaRef);
        result = { kind: 'retriable', code: result.code, message: `${result.message} (reference forgotten: the media is uploaded again on the next attempt)` };
      }
    }
    if (firstOfClaim && firstPartStartedAt === 0) firstPartStartedAt = startedAt;
    report.attempts++;
    const next = await applyResult(deps, ctx, target, index, result, firstPartStartedAt);
    if (next !== 'next-part') return next === 'stop' ? null : next;
  }
  return null;
}

/**
 * The part to send. On a platform that uploads media with a send, the first lane to need a
 * media gets its content with `upload` (and must report the send's result through it).
 */
async function outgoingPart(
  deps: SenderDeps,
  ctx: LaneContext,
  index: number,
): Promise<{ part: OutgoingPart; upload?: MediaUpload } | { failure: SendFailure }> {
  const part = ctx.run.parts[index]!;
  if (part.type === 'text') return { part: { type: 'text', text: part.text } };
  const media = await deps.media.resolve(ctx.transport, ctx.account, part.mediaId, deps.clock.now());
  if (!media.ok) return { failure: media.result };
  return {
    part: {
      type: 'media',
      mediaRef: media.ref,
      contentType: media.contentType,
      filename: media.filename,
      ...(part.caption ? { caption: part.caption } : {}),
      ...(media.upload ? { upload: media.upload.content } : {}),
    },
    ...(media.upload ? { upload: media.upload } : {}),
  };
}

/**
 * Hands the outcome of a send that uploaded a media to the lanes waiting for it: the new
 * reference when it was delivered with one, else nothing (the next waiting lane uploads).
 */
async function reportUpload(deps: SenderDeps, ctx: LaneContext, chatId: string, index: number, upload: MediaUpload, result: SendResult): Promise<void> {
  const ref = result.kind === 'delivered' && result.mediaRef ? result.mediaRef : null;
  await upload.settle(ref).catch((error: unknown) => {
    // Only the write to PostgreSQL failed: this replica keeps the reference; another may upload again.
    deps.logger.warn({ err: error, runId: ctx.run.runId, accountId: ctx.run.account.id, chatId, partIndex: index }, 'media reference not saved');
  });
}

/**
 * Records one part's result: 'next-part' when the chat's next part may follow, 'stop' when the
 * chat is done for this job, or the `sent` settlement of a chat whose last part was delivered
 * (left to the lane, which writes it with its next claim).
 */
async function applyResult(
  deps: SenderDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  result: SendResult,
  firstPartStartedAt: number,
): Promise<'next-part' | 'stop' | SentSettlement> {
  const { run, report, token } = ctx;
  const platform = run.account.platform;
  const now = deps.clock.now();
  const at = new Date(now);
  const log = deps.logger.child({ runId: run.runId, accountId: run.account.id, chatId: target.chatId, partIndex: index });
  let owned = true;
  switch (result.kind) {
    case 'delivered': {
      deps.metrics.sends.inc({ platform, result: 'sent' });
      report.delivered++;
      if (index === run.parts.length - 1) {
        return { chatId: target.chatId, at, latencyMs: now - firstPartStartedAt, partsSent: index + 1, messageId: result.messageId };
      }
      owned = await deps.repo.recordPart(run.runId, target.chatId, token, index + 1, result.messageId, at);
      if (!owned) log.warn('delivered, but the target lease was lost meanwhile: result not recorded');
      return owned ? 'next-part' : 'stop';
    }
    case 'account-wait': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      deps.metrics.providerWait.inc({ scope: 'account' }, result.retryAfterMs / 1000);
      const until = now + result.retryAfterMs;
      report.blockedUntil = Math.max(report.blockedUntil, until);
      stopWith(report, 'account-wait');
      await deps.repo.blockAccount(run.account.id, new Date(until), at);
      log.warn({ code: result.code, retryAfterMs: result.retryAfterMs }, 'account must wait: no send from it until the wait ends');
      await release(deps, ctx, target.chatId, until, result.code);
      return 'stop';
    }
    case 'chat-wait': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      deps.metrics.providerWait.inc({ scope: 'chat' }, result.retryAfterMs / 1000);
      log.info({ code: result.code, retryAfterMs: result.retryAfterMs }, 'chat must wait; other chats go on');
      await release(deps, ctx, target.chatId, now + result.retryAfterMs, result.code);
      return 'stop';
    }
    case 'account-unavailable': {
      deps.metrics.sends.inc({ platform, result: 'retry' });
      stopWith(report, 'account-unavailable');
      log.warn({ code: result.code }, 'account unavailable: disconnected, its runs paused');
      await release(deps, ctx, target.chatId, now, result.code);
      await deps.repo.disconnectAccount(run.account.id, accountAdvice(platform, run.account.id, 'disconnected', result.code), at);
      return 'stop';
    }
    case 'rejected': {
      deps.metrics.sends.inc({ platform, result: 'failed' });
      log.warn({ code: result.code, err: result.message }, 'send failed permanently for this chat');
      await deps.repo.settle(run.runId, target.chatId, token, { status: 'failed', errorCode: result.code, errorMessage: result.message, countAttempt: true }, at);
      return 'stop';
    }
    case 'retriable': {
      const attempts = target.attempts + 1;
      const exhausted = attempts >= deps.settings.maxRetries;
      deps.metrics.sends.inc({ platform, result: exhausted ? 'failed' : 'retry' });
      log.warn({ code: result.code, err: result.message, attempts }, exhausted ? 'send failed: retries exhausted' : 'send failed: will retry');
      await deps.repo.settle(
        run.runId,
        target.chatId,
        token,
        exhausted
          ? { status: 'failed', errorCode: result.code, errorMessage: result.message, countAttempt: true }
          : { status: 'pending', nextAttemptAt: new Date(now + retryDelayMs(attempts, deps.random)), countAttempt: true, errorCode: result.code, errorMessage: result.message },
        at,
      );
      return 'stop';
    }
    case 'ambiguous': {
      deps.metrics.sends.inc({ platform, result: 'unknown' });
      log.warn({ code: result.code, err: result.message }, 'send outcome unknown: not retried automatically');
      await deps.repo.settle(run.runId, target.chatId, token, { status: 'unknown', errorCode: result.code, errorMessage: result.message, countAttempt: true }, at);
      return 'stop';
    }
    case 'chat-moved': {
      // Not delivered: the chat lives under a new id. The target is renamed (here and in the
      // campaign's targets) and due at once, no attempt counted; if the new id is already a
      // target of this run, this one is skipped so that chat gets the message once.
      deps.metrics.sends.inc({ platform, result: 'retry' });
      const moved = await deps.repo.moveTarget(run.runId, run.campaignId, target.chatId, result.newChatId, token, result.code, at);
      if (moved === 'lost') log.warn('chat moved, but the target lease was lost meanwhile: not renamed');
      else log.info({ code: result.code, newChatId: result.newChatId, moved }, moved === 'moved' ? 'chat moved: target renamed, sent again at once' : 'chat moved to a chat already targeted: skipped');
      return 'stop';
    }
  }
}
