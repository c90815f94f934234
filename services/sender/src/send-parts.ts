import { MEDIA_REF_INVALID, type SendFailure, type SendResult } from '@metronome/core';
import { isTransientDbError, type ClaimedTarget, type SentSettlement } from '@metronome/db';
import type { OutgoingPart } from '@metronome/transports';
import type { JobDeps } from './deps.js';
import { durably, hardStopped, pause, stopWith, windowClosed, type LaneContext } from './lane-context.js';
import type { MediaUpload, PreparedPart } from './media-refs.js';
import { reserveSlot, spaceWrite, waitForSlot } from './pace-slots.js';
import { applyResult, releaseTarget } from './part-result.js';
import { personalPart } from './personal-parts.js';
import { backFromPlatformWait, typeBeforeSlot, typingAhead } from './typing.js';

export type { PreparedPart } from './media-refs.js';

/**
 * Sends a claimed target's parts from `from` on, in order. `ready` is part `from` when the
 * lane already took its slot and stamped its send (a claim at the slot): it is written at once.
 * Every other part waits while the target is held but not sending (`send_started_at` null):
 * its content, its slot, then the stamp, then the request. Returns the `sent` settlement of a
 * chat whose last part was delivered (the lane writes it), else null.
 */
export async function sendParts(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget, from: number, ready?: PreparedPart): Promise<SentSettlement | null> {
  const { run } = ctx;
  const partCount = run.parts.length;
  let firstPartStartedAt = 0;
  let readyPart: PreparedPart | undefined = ready;
  const refreshed = new Set<number>();
  for (let index = from; index < partCount; index++) {
    const part = readyPart ?? (await holdUntilWritable(deps, ctx, target, index, index === from));
    readyPart = undefined;
    if (part === null) return null;
    const startedAt = deps.clock.now();
    if (firstPartStartedAt === 0) firstPartStartedAt = startedAt;
    const result = 'failure' in part ? part.failure : await transmit(deps, ctx, target, index, part);
    if ('part' in part && part.part.type === 'media' && !part.upload && isRefRefused(result) && !refreshed.has(index)) {
      // The platform no longer knows the reference (it restarted, or the ref expired): forget
      // it and send this part again, uploading first, with no attempt counted. Once per part
      // per job, so a platform that refuses every fresh reference cannot loop.
      refreshed.add(index);
      const sent = run.parts[index]!;
      if (sent.type === 'media') await deps.media.forget(ctx.account.id, sent.mediaId, part.part.mediaRef);
      if (!(await markWaiting(deps, ctx, target))) return null;
      index--;
      continue;
    }
    const outcome = refreshed.has(index) && isRefRefused(result)
      ? { kind: 'retriable' as const, code: MEDIA_REF_INVALID, message: 'the platform refused a freshly uploaded media reference' }
      : result;
    ctx.report.attempts++;
    const next = await applyResult(deps, ctx, target, index, outcome, firstPartStartedAt);
    if (next !== 'next-part') return next === 'stop' ? null : next;
  }
  return null;
}

function isRefRefused(result: SendResult): boolean {
  return result.kind === 'rejected' && result.code === MEDIA_REF_INVALID;
}

/**
 * Gets part `index` of a held target ready to write: its content, its pace slot (slept out),
 * then the stamp that marks its request as begun. Null when the lane stopped instead (the
 * target is then back to pending, its delivered parts kept).
 */
async function holdUntilWritable(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget, index: number, firstOfClaim: boolean): Promise<PreparedPart | null> {
  const { report } = ctx;
  const giveBack = async (at: number, upload?: MediaUpload) => {
    await upload?.settle(null).catch(() => undefined);
    await releaseTarget(deps, ctx, target.chatId, at);
    return null;
  };
  if (hardStopped(report) || deps.draining.aborted || (firstOfClaim && report.stop)) return giveBack(deps.clock.now());
  // Jitter between the parts of one chat, before the reservation so the slot is fresh.
  if (!firstOfClaim && deps.settings.partJitterMs > 0) await pause(deps, ctx, deps.random() * deps.settings.partJitterMs);
  let part: PreparedPart;
  try {
    // The content before the slot: lanes waiting for one media upload are released together,
    // and would go out back to back on slots reserved before the wait.
    part = await outgoingPart(deps, ctx, index);
  } catch (error) {
    await giveBack(deps.clock.now()).catch(() => undefined);
    throw error;
  }
  // Nothing to send (media missing or its upload refused): no slot is spent on it.
  if ('failure' in part) return part;
  // Typing first: from `typing` ms before the slot until it (typing.ts); none after a platform's wait.
  const typing = firstOfClaim && backFromPlatformWait(target) ? 0 : typingAhead(ctx, part.part);
  const slot = await reserveSlot(deps, ctx, target.chatId, firstOfClaim ? ctx.firstPartMaxWaitMs + typing : Number.MAX_SAFE_INTEGER, typing);
  if (!slot.go) return giveBack(slot.chatWaitUntil ?? deps.clock.now(), part.upload);
  const sendAt = typing > 0 ? await typeBeforeSlot(deps, ctx, target.chatId, part.part, typing, slot.at) : slot.at;
  if (sendAt === null || !(await waitForSlot(deps, ctx, sendAt))) return giveBack(deps.clock.now(), part.upload);
  if (windowClosed(deps, ctx.run)) {
    stopWith(report, 'window');
    return giveBack(deps.clock.now(), part.upload);
  }
  try {
    const at = new Date(deps.clock.now());
    if (!(await deps.targets.markSending(ctx.run.runId, target.chatId, ctx.token, at, at))) {
      await part.upload?.settle(null).catch(() => undefined);
      stopWith(report, 'lock-lost');
      return null;
    }
  } catch (error) {
    if (!isTransientDbError(error)) throw error;
    stopWith(report, 'storage');
    return giveBack(deps.clock.now(), part.upload);
  }
  return part;
}

/** Marks a held target as not sending (its last request was answered; another is to come). */
async function markWaiting(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget): Promise<boolean> {
  const now = new Date(deps.clock.now());
  return (await durably(deps, ctx, [target.chatId], 'waiting', () => deps.targets.markSending(ctx.run.runId, target.chatId, ctx.token, null, now))) === true;
}

/** Writes one part's request (its send is stamped) and reports a media's first upload. */
async function transmit(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget, index: number, part: { part: OutgoingPart; upload?: MediaUpload }): Promise<SendResult> {
  await spaceWrite(deps, ctx);
  const result = await ctx.transport.send(ctx.account, {
    chatId: target.chatId,
    part: personalPart(part.part, ctx.templates[index] ?? null, { runId: ctx.run.runId, chatId: target.chatId, partIndex: index }, target.vars ?? null),
    partIndex: index,
    partCount: ctx.run.parts.length,
    idempotencyKey: `${ctx.run.runId}:${target.chatId}:${index}`,
  });
  if (part.upload) {
    const ref = result.kind === 'delivered' && result.mediaRef ? result.mediaRef : null;
    await part.upload.settle(ref).catch((error: unknown) => {
      // Only the write to PostgreSQL failed: this replica keeps the reference; another may upload again.
      deps.events.emit('media:unsaved', { runId: ctx.run.runId, accountId: ctx.run.account.id, chatId: target.chatId, partIndex: index, error });
    });
  }
  return result;
}

/**
 * The part to send. On a platform that uploads media with a send, the first lane to need a
 * media gets its content with `upload` (and must report the send's result through it).
 */
export async function outgoingPart(deps: JobDeps, ctx: LaneContext, index: number): Promise<PreparedPart> {
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
