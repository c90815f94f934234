import { afterWrite, DAY_MS, drawSendDelayMs, gateLimit, gateLimits, GroupCommit, SEND_GAP_MARGIN_MS, writeWaitMs, type SendLimits } from '@metronome/core';
import { isTransientDbError, type RunForSend } from '@metronome/db';
import type { ChatPace, PaceReservation, SafeReservation } from '@metronome/redis';
import type { JobDeps } from './deps.js';
import { hardStopped, pause, stopWith, type LaneContext } from './lane-context.js';

// The gate: every limit a send meets before its request is written, read from the one list in
// libs/core (limits.ts): the account's pace and the chat's (reserved in Redis, several lanes'
// plain reservations in one call: PaceBatches), the human gap and the caps with the warm-up
// (one reservation per send: reserveSafe), and the spacing of the job's own writes. Cooling is
// met before the account's lock (run-job.ts, libs/core decideJobStart).

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
export async function spaceWrite(deps: JobDeps, ctx: LaneContext): Promise<WriteTurn> {
  for (;;) {
    // the previous request first: one that left late (a new connection, a busy event loop) pushes this one
    const previous = ctx.writing;
    await previous;
    if (ctx.writing !== previous) continue; // another lane wrote meanwhile: its request too
    foldLeftAt(ctx);
    const now = deps.clock.now();
    const wait = Math.max(writeWaitMs(ctx.sent, now, ctx.configuredIntervalMs, ctx.burst), gapWaitMs(ctx, now));
    if (wait < TIMER_GRAIN_MS) {
      ctx.sent = afterWrite(ctx.sent, now, ctx.configuredIntervalMs);
      ctx.lastWriteAt = now;
      return takeTurn(deps, ctx);
    }
    await deps.sleep(Math.ceil(wait));
  }
}

/** A lane's turn to write: `onWritten` goes with its request (transports that tell), `ended` once its send is over, whatever came of it. */
export interface WriteTurn {
  onWritten?: () => void;
  ended: () => void;
}

/**
 * The job waits for this request to leave before its next one goes (transports that tell when,
 * `reportsWrites`; accounts paced slower than a timer's grain). A request that waited for a
 * connection, or for a busy event loop, would otherwise reach the platform together with the
 * next, on time one.
 */
function takeTurn(deps: JobDeps, ctx: LaneContext): WriteTurn {
  if (!ctx.transport.reportsWrites || ctx.configuredIntervalMs < TIMER_GRAIN_MS) return { ended: () => undefined };
  let settle!: () => void;
  ctx.writing = new Promise<void>((resolve) => (settle = resolve));
  return {
    onWritten: () => {
      ctx.leftAt = Math.max(ctx.leftAt, deps.clock.now());
      settle();
    },
    ended: () => settle(),
  };
}

/** Takes in when the job's latest request really left: the pace and the least gap count from then. */
export function foldLeftAt(ctx: LaneContext): void {
  if (ctx.leftAt === 0) return;
  ctx.sent = { tat: Math.max(ctx.sent.tat, ctx.leftAt + ctx.configuredIntervalMs) };
  ctx.lastWriteAt = Math.max(ctx.lastWriteAt, ctx.leftAt);
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

/**
 * After Redis lost an account's sends, its next send waits this much beyond the last one
 * PostgreSQL knows plus the least gap: a replica that lost its lock with the flush may still
 * write a request stamped a moment ago (its write follows its stamp by up to one pace interval).
 */
const REBUILD_MARGIN_MS = 1_000;

/** The ban-safety limits of the run's account now (its daily cap lowered by today's warm-up); null when it has none. */
export function limitsOf(run: RunForSend, now: number): SendLimits | null {
  return gateLimits(run.account, now);
}

/**
 * Reserves a slot under the account's limits (one round trip; two more, once, when Redis lost
 * the account's sends and they are rebuilt from PostgreSQL first).
 */
export async function reserveSafe(
  deps: JobDeps,
  ctx: LaneContext,
  limits: SendLimits,
  now: number,
  chat: ChatPace,
  maxWaitMs: number,
): Promise<SafeReservation> {
  const id = ctx.run.account.id;
  const perMinute = 60_000 / ctx.intervalMs;
  const args = { gapAfterMs: limits.delay ? drawSendDelayMs(limits.delay, deps.random) : 0, hourlyCap: limits.hourlyCap, dailyCap: limits.dailyCap };
  const first = await deps.pace.safe.reserve(id, ctx.token, now, perMinute, ctx.burst, chat, maxWaitMs, args);
  if (!('rebuild' in first)) return first;
  try {
    const sends = await deps.repo.accounts.recentSends(id, new Date(now - DAY_MS - REBUILD_MARGIN_MS));
    const nextAt = sends.lastAt === null || limits.minDelayMs === 0 ? 0 : sends.lastAt + limits.minDelayMs + ctx.configuredIntervalMs + REBUILD_MARGIN_MS;
    await deps.pace.safe.rebuild(id, ctx.token, now, nextAt, sends.times);
    deps.events.emit('pace:rebuilt', { accountId: id, sends: sends.times.length });
  } catch (error) {
    if (!isTransientDbError(error)) throw error;
    stopWith(ctx.report, 'storage');
    return { reserved: false, lockLost: true };
  }
  const again = await deps.pace.safe.reserve(id, ctx.token, deps.clock.now(), perMinute, ctx.burst, chat, maxWaitMs, args);
  // still not there: the lock went with it, and the job stops
  return 'rebuild' in again ? { reserved: false, lockLost: true } : again;
}

/** How long a request must still wait so that it follows the job's previous one by the least gap (plus the transit margin). */
export function gapWaitMs(ctx: LaneContext, now: number): number {
  const min = ctx.limits?.minDelayMs ?? 0;
  if (min <= 0 || ctx.lastWriteAt === 0) return 0;
  return Math.max(0, ctx.lastWriteAt + min + SEND_GAP_MARGIN_MS - now);
}

/**
 * The earliest the account's next send may go by its human gap, from when this job's last
 * request was really written (accounts with sendDelaySeconds; 0 for the rest, or when nothing
 * was written). Given to the shared gap as the job releases its account lock.
 */
export function gapFloor(ctx: LaneContext): number {
  const min = ctx.limits?.minDelayMs ?? 0;
  if (min <= 0 || ctx.lastWriteAt === 0) return 0;
  return ctx.lastWriteAt + min + SEND_GAP_MARGIN_MS;
}

/**
 * How far ahead a fast account's slots are reserved before its lanes ask for them. Slots due
 * within this of the last one asked for are reserved in the same call, for the job's next
 * sends: a lane comes back for its next slot one claim and one request later, so a fast job
 * makes a few Redis calls instead of one per send. Accounts slower than one send per
 * RESERVE_AHEAD_MS, and senders that wait in-process less than it (SENDER_MAX_INLINE_WAIT_MS),
 * are reserved exactly as asked. A slot reserved ahead and not taken holds the account back by
 * at most this much: the pace can only come out slower.
 */
export const RESERVE_AHEAD_MS = 20;

/**
 * The job's plain pace reservations (no ban-safety limits, no chat pace: a first part, whose
 * chat is claimed at its slot), one Redis call at a time (group commit, as JobWrites in writes.ts
 * does for claims). A lane asks at once when no reservation of the job is out; lanes that ask
 * while one is out wait for it, then reserve together in one call (pace-reserve-many-3), each
 * slot the one a call of its own would have reserved, in the order they asked. Lanes whose
 * slots would lie beyond their longest wait ask again at once, first in line (GroupCommit, libs/core).
 * A fast account's call also reserves the slots due just after (RESERVE_AHEAD_MS), up to what
 * the job may still send (`spare`); lanes take those first, in order, without a call.
 */
export class PaceBatches {
  // lanes that may wait as long share a call (lanes typing first may wait longer)
  private readonly reservations: GroupCommit<number, PaceReservation>;
  /** slots reserved ahead, in order: when each may be sent (`at`) and until when it may be taken (ms since the epoch) */
  private ahead: { at: number; until: number }[] = [];

  /**
   * `spare`: how many more slots the job may still take beyond those asked for (its budget
   * and its due targets left); nothing is reserved ahead beyond it.
   */
  constructor(
    private readonly deps: JobDeps,
    accountId: string,
    token: string,
    perMinute: number,
    burst: number,
    spare: () => number,
  ) {
    // a slot reserved ahead is taken within the inline wait or dropped (takeAhead)
    const aheadCount = deps.settings.maxInlineWaitMs < RESERVE_AHEAD_MS ? 0 : Math.floor(RESERVE_AHEAD_MS / (60_000 / perMinute));
    this.reservations = new GroupCommit(async (maxWaitMs, requests): Promise<PaceReservation[]> => {
      const now = deps.clock.now();
      const taken = this.takeAhead(now, maxWaitMs, requests.length);
      if (taken.length === requests.length) return taken;
      const count = requests.length - taken.length;
      const extra = Math.max(0, Math.min(aheadCount, spare()));
      const result = await deps.pace.reserveMany(accountId, token, now, perMinute, burst, maxWaitMs, count + extra);
      // refused: every lane of the call is told why (and a lost lock voids what was reserved
      // ahead); cut short by the longest wait: the rest ask again
      if (!result.reserved) {
        if ('lockLost' in result) this.ahead = [];
        return [...taken, ...Array.from({ length: count }, () => result)];
      }
      const until = now + deps.settings.maxInlineWaitMs;
      this.ahead.push(...result.waitsMs.slice(count).map((waitMs) => ({ at: now + waitMs, until })));
      return [...taken, ...result.waitsMs.slice(0, count).map((waitMs) => ({ reserved: true as const, waitMs }))];
    });
  }

  /** Reserves one slot of the account's pace at most `maxWaitMs` ahead. */
  reserve(maxWaitMs: number): Promise<PaceReservation> {
    const [slot] = this.takeAhead(this.deps.clock.now(), maxWaitMs, 1);
    return slot ? Promise.resolve(slot) : this.reservations.ask(maxWaitMs);
  }

  /**
   * Up to `count` slots reserved ahead, earliest first. A slot is taken at most
   * SENDER_MAX_INLINE_WAIT_MS after the call that reserved it and checked the lock, as a lane's
   * own slot is sent at most that long after its call; later, it is dropped (a slot sent later
   * than its moment only makes the account slower).
   */
  private takeAhead(now: number, maxWaitMs: number, count: number): PaceReservation[] {
    while (this.ahead.length > 0 && this.ahead[0]!.until < now) this.ahead.shift();
    const taken: PaceReservation[] = [];
    while (taken.length < count && this.ahead.length > 0 && this.ahead[0]!.at - now <= maxWaitMs) {
      taken.push({ reserved: true, waitMs: Math.max(0, this.ahead.shift()!.at - now) });
    }
    return taken;
  }
}
