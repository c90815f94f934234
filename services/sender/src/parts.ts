import {
  compileText,
  MEDIA_REF_INVALID,
  renderText,
  targetHold,
  textOverLimit,
  typingMs,
  writeWaitMs,
  type MessageTemplate,
  type RenderedText,
  type RenderKey,
  type SendFailure,
  type SendResult,
  type TextLimits,
} from '@metronome/core';
import { isTransientDbError, type ClaimedTarget, type MessagePart, type SentSettlement, type TargetRef } from '@metronome/db';
import type { OutgoingPart } from '@metronome/transports';
import type { JobDeps } from './deps.js';
import { gapWaitMs, reserveSlot, spaceWrite, waitForSlot } from './gate.js';
import { hardStopped, pause, stopWith, windowClosed, type LaneContext, type PartTemplates } from './lane-context.js';
import type { MediaUpload, PreparedPart } from './media-refs.js';

// One claimed chat's parts, in order: each part's content (personal texts compiled once per
// job), its typing before its slot, its pace slot (gate.ts), its request, and its answer's
// settlement (writes.ts).

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
  // when this chat's previous part was written: the next waits a chat interval from then
  const chat = { writtenAt: 0 };
  for (let index = from; index < partCount; index++) {
    const part = readyPart ?? (await holdUntilWritable(deps, ctx, target, index, index === from, chat.writtenAt));
    readyPart = undefined;
    if (part === null) return null;
    const startedAt = deps.clock.now();
    if (firstPartStartedAt === 0) firstPartStartedAt = startedAt;
    const result = 'failure' in part ? part.failure : await transmit(deps, ctx, target, index, part, chat);
    if ('part' in part && part.part.type === 'media' && !part.upload && isRefRefused(result) && !refreshed.has(index)) {
      // The platform no longer knows the reference (it restarted, or the ref expired): forget
      // it and send this part again, uploading first, with no attempt counted. Once per part
      // per job, so a platform that refuses every fresh reference cannot loop.
      refreshed.add(index);
      const sent = run.parts[index]!;
      if (sent.type === 'media') await deps.media.forget(ctx.account.id, sent.mediaId, part.part.mediaRef);
      if (!(await ctx.writes.markWaiting(target))) return null;
      index--;
      continue;
    }
    const outcome =
      refreshed.has(index) && isRefRefused(result)
        ? { kind: 'retriable' as const, code: MEDIA_REF_INVALID, message: 'the platform refused a freshly uploaded media reference' }
        : result;
    ctx.report.attempts++;
    const next = await ctx.writes.result(target, index, outcome, firstPartStartedAt);
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
 * target is then back to pending, its delivered parts kept). On a platform with a per-chat
 * pace, a part also waits one chat interval from when the chat's previous part was written
 * (`previousWrittenAt`): its slot counts from the previous slot, and a write that left late
 * (a slow stamp, a busy process) would otherwise reach the chat sooner than its pace allows.
 */
async function holdUntilWritable(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  firstOfClaim: boolean,
  previousWrittenAt = 0,
): Promise<PreparedPart | null> {
  const { report } = ctx;
  const giveBack = async (at: number, upload?: MediaUpload) => {
    await upload?.settle(null).catch(() => undefined);
    await ctx.writes.release(target, at);
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
  const sendAt = typing > 0 ? await typeBeforeSlot(deps, ctx, target, part.part, typing, slot.at) : slot.at;
  if (sendAt === null || !(await waitForSlot(deps, ctx, sendAt))) return giveBack(deps.clock.now(), part.upload);
  const chatGap = previousWrittenAt > 0 && ctx.chatPerMinute > 0 ? previousWrittenAt + 60_000 / ctx.chatPerMinute - deps.clock.now() : 0;
  if (chatGap > 0) {
    await pause(deps, ctx, chatGap);
    if (hardStopped(report) || deps.draining.aborted) return giveBack(deps.clock.now(), part.upload);
  }
  if (windowClosed(deps, ctx.run)) {
    stopWith(report, 'window');
    return giveBack(deps.clock.now(), part.upload);
  }
  try {
    const at = new Date(deps.clock.now());
    if (!(await deps.targets.markSending(ctx.run.runId, target, ctx.token, at, at))) {
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

/** Writes one part's request (its send is stamped) and reports a media's first upload. */
async function transmit(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  index: number,
  part: { part: OutgoingPart; upload?: MediaUpload },
  chat: { writtenAt: number },
): Promise<SendResult> {
  const turn = await spaceWrite(deps, ctx);
  // when the request left: as the transport tells (it may wait for a connection), else now
  chat.writtenAt = deps.clock.now();
  const onWritten = () => {
    chat.writtenAt = Math.max(chat.writtenAt, deps.clock.now());
    turn.onWritten?.();
  };
  const result = await ctx.transport
    .send(ctx.account, {
      chatId: target.chatId,
      ...(target.threadId && { threadId: target.threadId }),
      part: personalPart(part.part, ctx.templates[index] ?? null, { runId: ctx.run.runId, chatId: target.chatId, partIndex: index }, target.vars ?? null),
      partIndex: index,
      partCount: ctx.run.parts.length,
      // a topic's own key (the platform would drop a second topic's part as a repeat)
      idempotencyKey: `${ctx.run.runId}:${target.threadId ? `${target.chatId}/${target.threadId}` : target.chatId}:${index}`,
      onWritten,
    })
    .finally(turn.ended);
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

// Typing first (CONTRACT §3, accounts: `typing`). The typing is taken from the wait the pace
// already imposes: it starts `d` before the part's slot, so the part still goes at its slot;
// an account that was idle (its slot is now) sends `d` later. Accounts without typing, and
// transports that show none, never come here: their sends take no extra step.

/**
 * Whether the job's first send follows a platform wait (flood wait, rate-overlimit) that just
 * ended: the job starts within `withinMs` (1 s, or SENDER_MAX_INLINE_WAIT_MS if longer) of the wait's end, as the
 * job deferred by the wait does (it is due at the end). That send goes without typing: the wait
 * was the platform's, and typing would add to it. A continuation due later (a pace slot) types.
 */
export function followsPlatformWait(blockedUntil: Date | null, now: number, withinMs: number): boolean {
  return blockedUntil !== null && blockedUntil.getTime() <= now && now - blockedUntil.getTime() <= withinMs;
}

/**
 * How long the chat sees the account typing before `part`, ms; 0 (no typing) when the account
 * has none, the transport shows none, or this is the job's first send after a platform wait.
 */
export function typingAhead(ctx: LaneContext, part: OutgoingPart): number {
  const typing = ctx.run.account.typing;
  if (!typing || !ctx.transport.showTyping) return 0;
  if (ctx.skipTypingOnce) {
    ctx.skipTypingOnce = false;
    return 0;
  }
  return typingMs(typing, part);
}

/** A target back from a platform's wait (slow mode on its chat, or its account's flood wait) goes without typing. */
export function backFromPlatformWait(target: ClaimedTarget): boolean {
  if (target.errorCode === undefined) return false;
  const hold = targetHold({ attempts: target.attempts, errorCode: target.errorCode });
  return hold === 'slow_mode' || hold === 'flood_wait';
}

/**
 * Shows typing to the chat from `slotAt - ms` (or now, if later) for `ms`, again as often as
 * the transport's indicator fades. Returns when the part may go (the typing's end, never
 * before `slotAt`), or null when the job stopped meanwhile (a drain, a hard stop).
 */
export async function typeBeforeSlot(deps: JobDeps, ctx: LaneContext, to: TargetRef, part: OutgoingPart, ms: number, slot: number): Promise<number | null> {
  const slotAt = writableAt(ctx, slot);
  const start = Math.max(deps.clock.now(), slotAt - ms);
  await pause(deps, ctx, start - deps.clock.now());
  const sendAt = Math.max(slotAt, start + ms);
  const every = ctx.transport.typingLastsMs;
  for (;;) {
    if (hardStopped(ctx.report) || deps.draining.aborted) return null;
    const shownAt = deps.clock.now();
    await ctx.transport.showTyping!(ctx.account, to.chatId, part, to.threadId);
    // Renewed a little before it fades (Telegram: 5 s), until the part goes.
    const next = every ? shownAt + every * 0.9 : Number.POSITIVE_INFINITY;
    if (next >= sendAt) break;
    await pause(deps, ctx, next - deps.clock.now());
  }
  return sendAt;
}

/**
 * When a request due at its slot `slotAt` can really be written: the job's own record of its
 * writes (a write that went late pushes the next) and the account's least gap may hold it
 * past the slot (gate.ts `waitForSlot`, `spaceWrite`). The typing ends then, not earlier.
 */
function writableAt(ctx: LaneContext, slotAt: number): number {
  const own = Math.max(
    writeWaitMs(ctx.written, slotAt, ctx.configuredIntervalMs, ctx.burst),
    writeWaitMs(ctx.sent, slotAt, ctx.configuredIntervalMs, ctx.burst),
  );
  return slotAt + Math.max(own, gapWaitMs(ctx, slotAt));
}

/**
 * The first part of a target claimed ahead of its slot: the typing (unless the target is back
 * from a platform's wait), the slot, then the stamp that marks its request as begun (and the
 * run's first send). False when the lane gave the target back instead.
 */
export async function typeClaimed(
  deps: JobDeps,
  ctx: LaneContext,
  target: ClaimedTarget,
  first: Extract<PreparedPart, { part: OutgoingPart }>,
  ms: number,
  slotAt: number,
): Promise<boolean> {
  const giveBack = async () => {
    await first.upload?.settle(null).catch(() => undefined);
    await ctx.writes.release(target, deps.clock.now());
    return false;
  };
  const sendAt = backFromPlatformWait(target) ? slotAt : await typeBeforeSlot(deps, ctx, target, first.part, ms, slotAt);
  if (sendAt === null || !(await waitForSlot(deps, ctx, sendAt))) return giveBack();
  if (windowClosed(deps, ctx.run)) {
    stopWith(ctx.report, 'window');
    return giveBack();
  }
  const now = deps.clock.now();
  let stamped: { owned: boolean; firstSend: boolean };
  try {
    stamped = await deps.targets.markTypedSending(ctx.run.runId, target, ctx.token, new Date(now), ctx.run.firstSendAt !== null);
  } catch (error) {
    if (!isTransientDbError(error)) throw error;
    stopWith(ctx.report, 'storage');
    return giveBack();
  }
  if (!stamped.owned) {
    await first.upload?.settle(null).catch(() => undefined);
    stopWith(ctx.report, 'lock-lost');
    return false;
  }
  if (stamped.firstSend) {
    ctx.run.firstSendAt = new Date(now);
    deps.events.emit('run:first-send', { runId: ctx.run.runId, trigger: ctx.run.trigger, lagMs: now - ctx.run.scheduledAt.getTime() });
  }
  return true;
}

/**
 * Compiles a run's parts once per job. A text the API would refuse today (saved before
 * templates were checked) is sent as written, as it was before: a stored campaign never
 * starts failing.
 */
export function compileParts(parts: MessagePart[]): PartTemplates {
  return parts.map((p) => {
    const text = p.type === 'text' ? p.text : p.caption;
    if (text === undefined) return null;
    const compiled = compileText(text);
    return compiled.ok ? compiled.template : null;
  });
}

/**
 * The part as one chat receives it: its variables filled in and its variations picked for
 * (run, chat, part), so every re-send of the chat in this run carries the same text.
 */
export function personalPart(part: OutgoingPart, template: MessageTemplate | null, key: RenderKey, vars: Record<string, string> | null): OutgoingPart {
  if (template === null) return part;
  if (part.type === 'text') return { ...part, text: renderText(template, key, vars) };
  return part.caption === undefined ? part : { ...part, caption: renderText(template, key, vars) };
}

/**
 * The failure of a chat one of whose parts, from `from` on, is longer once rendered for it
 * than the platform takes (`text_too_long`), or null. Checked before the chat's first part
 * goes out, so a chat gets its whole message or none of it.
 */
export function chatTextOverLimit(
  parts: MessagePart[],
  templates: PartTemplates,
  limits: TextLimits | undefined,
  key: { runId: string; chatId: string },
  vars: Record<string, string> | null,
  from: number,
): SendFailure | null {
  if (!limits) return null;
  const rendered: RenderedText[] = [];
  for (let index = from; index < parts.length; index++) {
    const part = parts[index]!;
    const template = templates[index] ?? null;
    const text = part.type === 'text' ? part.text : part.caption;
    const final = template === null || text === undefined ? text : renderText(template, { ...key, partIndex: index }, vars);
    rendered.push(part.type === 'text' ? { type: 'text', text: final ?? '' } : final === undefined ? { type: 'media' } : { type: 'media', caption: final });
  }
  return textOverLimit(rendered, limits, from);
}
