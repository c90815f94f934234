import { afterWrite, gateLimit, writeWaitMs } from '@metronome/core';
import { hardStopped, pause, stopWith, type LaneContext } from './lane-context.js';
import type { JobDeps } from './deps.js';
import { gapWaitMs, reserveSafe } from './safe-slots.js';

/** Waits shorter than this are not slept (a timer's grain on a busy event loop). */
const TIMER_GRAIN_MS = 2;

/**
 * Right before a request is written: keeps this job's writes one configured interval apart
 * however long the statement before took. A database that stalls for a moment releases the
 * lanes waiting on their claims together; without this they would write back to back.
 * Not cut short by a drain: the send is stamped as begun and goes out.
 *
 * A lane that slept asks again when it wakes, and the write is recorded in the same turn as
 * the answer that lets it go: lanes that came together and slept the same wait would otherwise
 * all wake on one moment and write together (seen at the platform as pairs of sends every two
 * intervals, 12 in a second at 600 a minute, after a stall had put two lanes behind).
 */
export async function spaceWrite(deps: JobDeps, ctx: LaneContext): Promise<void> {
  for (;;) {
    const now = deps.clock.now();
    const wait = Math.max(writeWaitMs(ctx.sent, now, ctx.configuredIntervalMs, ctx.burst), gapWaitMs(ctx, now));
    if (wait < TIMER_GRAIN_MS) {
      ctx.sent = afterWrite(ctx.sent, now, ctx.configuredIntervalMs);
      ctx.lastWriteAt = now;
      return;
    }
    await deps.sleep(Math.ceil(wait));
  }
}

/** A pace slot: send at `at`, or none (the lane yields; `chatWaitUntil` when only the chat's pace is the limit). */
export type Slot = { go: true; at: number } | { go: false; chatWaitUntil?: number };

/**
 * Reserves a pace slot for one part at most `maxWaitMs` ahead: the account's and, when
 * `chatId` is given on a platform with one, the chat's. Nothing is slept here. `leadMs`: the
 * part's typing, which starts that much before its slot — a job that yields for the pace is
 * due that much earlier, so its typing still ends at the slot.
 */
export async function reserveSlot(deps: JobDeps, ctx: LaneContext, chatId: string | null, maxWaitMs: number, leadMs = 0): Promise<Slot> {
  const now = deps.clock.now();
  const chat = { chatId: chatId ?? '', perMinute: chatId === null ? 0 : ctx.chatPerMinute };
  const result = ctx.limits
    ? await reserveSafe(deps, ctx, ctx.limits, now, chat, maxWaitMs)
    : chat.perMinute === 0
      ? await ctx.paceBatches.reserve(maxWaitMs)
      : await deps.pace.reserve(ctx.run.account.id, ctx.token, now, 60_000 / ctx.intervalMs, ctx.burst, chat, maxWaitMs);
  if ('lockLost' in result || 'rebuild' in result) {
    stopWith(ctx.report, 'lock-lost');
    return { go: false };
  }
  if (!result.reserved) {
    const limit = gateLimit(result.limitedBy);
    if (limit.gate === 'chat') return { go: false, chatWaitUntil: now + result.waitMs };
    // A cap met: the job ends and its run continues when the window frees a slot (or pauses, if its delivery window closes first).
    if (limit.key === 'cap') {
      ctx.report.capUntil = Math.max(ctx.report.capUntil, now + result.waitMs);
      deps.events.emit('account:cap', { runId: ctx.run.runId, accountId: ctx.run.account.id, waitMs: result.waitMs });
    }
    ctx.report.nextTokenAt = Math.max(ctx.report.nextTokenAt, now + result.waitMs - leadMs);
    stopWith(ctx.report, 'pace');
    return { go: false };
  }
  ctx.lastSlotAt = Math.max(ctx.lastSlotAt, now + result.waitMs);
  return { go: true, at: now + result.waitMs };
}

/**
 * Takes the chat's pace for a send whose account slot was reserved before its chat was known
 * (a claim). Returns when the chat may be sent to, if not now.
 */
export async function reserveChatNow(deps: JobDeps, ctx: LaneContext, chatId: string): Promise<{ ok: true } | { ok: false; until: number }> {
  if (ctx.chatPerMinute <= 0) return { ok: true };
  const now = deps.clock.now();
  const result = await deps.pace.reserveChat(ctx.run.account.id, ctx.token, now, { chatId, perMinute: ctx.chatPerMinute }, 0);
  if ('lockLost' in result) {
    stopWith(ctx.report, 'lock-lost');
    return { ok: false, until: now };
  }
  return result.reserved ? { ok: true } : { ok: false, until: now + result.waitMs };
}

/**
 * Sleeps until the slot, then as long as this job's own record of when its lanes really went
 * ahead asks: a lane that woke late (a busy event loop) pushes the next instead of being
 * followed at once. The moment it returns true is recorded synchronously, before the
 * statement that precedes the write, so two lanes never go ahead on one moment. False when a
 * hard stop came meanwhile (nothing recorded).
 */
export async function waitForSlot(deps: JobDeps, ctx: LaneContext, at: number): Promise<boolean> {
  // A slot due within TIMER_GRAIN_MS is taken at once: a timer that short costs more than the
  // precision it buys, and going that much early stays inside the pace's margin.
  if (at - deps.clock.now() >= TIMER_GRAIN_MS) await pause(deps, ctx, at - deps.clock.now());
  for (;;) {
    if (hardStopped(ctx.report) || deps.draining.aborted) return false;
    const now = deps.clock.now();
    // Against the configured pace, not the slots' (which keep a margin): a lane on time never
    // waits here, and a wait below a timer's grain is not slept.
    const wait = writeWaitMs(ctx.written, now, ctx.configuredIntervalMs, ctx.burst);
    if (wait < TIMER_GRAIN_MS) {
      ctx.written = afterWrite(ctx.written, now, ctx.configuredIntervalMs);
      return true;
    }
    await pause(deps, ctx, wait);
  }
}

/**
 * Sleeps until `at` (typing first: a part's slot less its typing time) without taking the slot:
 * the lane claims its chat then and types until the slot, where `waitForSlot` takes it. False
 * when a hard stop or a drain came meanwhile.
 */
export async function wakeBefore(deps: JobDeps, ctx: LaneContext, at: number): Promise<boolean> {
  if (at - deps.clock.now() >= TIMER_GRAIN_MS) await pause(deps, ctx, at - deps.clock.now());
  return !(hardStopped(ctx.report) || deps.draining.aborted);
}
