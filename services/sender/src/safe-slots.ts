import { DAY_MS, drawSendDelayMs, gateLimits, SEND_GAP_MARGIN_MS, type SendLimits } from '@metronome/core';
import { isTransientDbError, type RunForSend } from '@metronome/db';
import type { ChatPace, SafeReservation } from '@metronome/redis';
import type { JobDeps } from './deps.js';
import { stopWith, type LaneContext } from './lane-context.js';

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
export async function reserveSafe(deps: JobDeps, ctx: LaneContext, limits: SendLimits, now: number, chat: ChatPace, maxWaitMs: number): Promise<SafeReservation> {
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
