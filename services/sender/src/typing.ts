import { targetHold, typingMs, writeWaitMs } from '@metronome/core';
import { isTransientDbError, type ClaimedTarget } from '@metronome/db';
import type { OutgoingPart } from '@metronome/transports';
import type { JobDeps } from './deps.js';
import { hardStopped, pause, stopWith, windowClosed, type LaneContext } from './lane-context.js';
import { waitForSlot } from './pace-slots.js';
import { releaseTarget } from './part-result.js';
import { gapWaitMs } from './safe-slots.js';
import type { PreparedPart } from './media-refs.js';

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
export async function typeBeforeSlot(deps: JobDeps, ctx: LaneContext, chatId: string, part: OutgoingPart, ms: number, slot: number): Promise<number | null> {
  const slotAt = writableAt(ctx, slot);
  const start = Math.max(deps.clock.now(), slotAt - ms);
  await pause(deps, ctx, start - deps.clock.now());
  const sendAt = Math.max(slotAt, start + ms);
  const every = ctx.transport.typingLastsMs;
  for (;;) {
    if (hardStopped(ctx.report) || deps.draining.aborted) return null;
    const shownAt = deps.clock.now();
    await ctx.transport.showTyping!(ctx.account, chatId, part);
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
 * past the slot (pace-slots `waitForSlot`, `spaceWrite`). The typing ends then, not earlier.
 */
function writableAt(ctx: LaneContext, slotAt: number): number {
  const own = Math.max(writeWaitMs(ctx.written, slotAt, ctx.configuredIntervalMs, ctx.burst), writeWaitMs(ctx.sent, slotAt, ctx.configuredIntervalMs, ctx.burst));
  return slotAt + Math.max(own, gapWaitMs(ctx, slotAt));
}

/**
 * The first part of a target claimed ahead of its slot: the typing (unless the target is back
 * from a platform's wait), the slot, then the stamp that marks its request as begun (and the
 * run's first send). False when the lane gave the target back instead.
 */
export async function typeClaimed(deps: JobDeps, ctx: LaneContext, target: ClaimedTarget, first: Extract<PreparedPart, { part: OutgoingPart }>, ms: number, slotAt: number): Promise<boolean> {
  const giveBack = async () => {
    await first.upload?.settle(null).catch(() => undefined);
    await releaseTarget(deps, ctx, target.chatId, deps.clock.now());
    return false;
  };
  const sendAt = backFromPlatformWait(target) ? slotAt : await typeBeforeSlot(deps, ctx, target.chatId, first.part, ms, slotAt);
  if (sendAt === null || !(await waitForSlot(deps, ctx, sendAt))) return giveBack();
  if (windowClosed(deps, ctx.run)) {
    stopWith(ctx.report, 'window');
    return giveBack();
  }
  const now = deps.clock.now();
  let stamped: { owned: boolean; firstSend: boolean };
  try {
    stamped = await deps.targets.markTypedSending(ctx.run.runId, target.chatId, ctx.token, new Date(now), ctx.run.firstSendAt !== null);
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
