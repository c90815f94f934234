import type { RedisKeys } from './keys.js';
import type { ChatPace, SafeReservation } from './pace-types.js';
import { paceSeedReplies, safeReserveReplies } from './pace-replies.js';
import type { ScriptCommands } from './scripts.js';

/** The ban-safety limits of one reservation (libs/core SendLimits, with this send's gap drawn). */
export interface SafeLimits {
  /** the gap after this send, ms (0: none) */
  gapAfterMs: number;
  /** 0: none */
  hourlyCap: number;
  /** 0: none */
  dailyCap: number;
}

export type { SafeReservation } from './pace-types.js';

let sequence = 0;

/**
 * The pace of accounts with human pacing or caps (lua/pace-reserve-safe-6.lua): one round trip
 * per send like AccountPace, which accounts without them keep using.
 */
export class SafePace {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

  /** Reserves the account's next slot under its limits, for the holder of the lock `lockToken`. */
  async reserve(
    accountId: string,
    lockToken: string,
    nowMs: number,
    perMinute: number,
    burst: number,
    chat: ChatPace,
    maxWaitMs: number,
    limits: SafeLimits,
  ): Promise<SafeReservation> {
    const k = this.keys;
    return this.scripts.run(
      safeReserveReplies,
      [
        k.accountPace(accountId),
        k.accountLock(accountId),
        k.chatPace(accountId, chat.chatId),
        k.accountSends(accountId),
        k.accountGap(accountId),
        k.accountCap(accountId),
      ],
      [
        nowMs,
        60_000 / perMinute,
        burst,
        lockToken,
        chat.perMinute > 0 ? 60_000 / chat.perMinute : 0,
        Math.min(maxWaitMs, Number.MAX_SAFE_INTEGER),
        Math.max(0, Math.round(limits.gapAfterMs)),
        limits.hourlyCap,
        limits.dailyCap,
        `${lockToken}:${nowMs}:${++sequence}`,
      ],
    );
  }

  /**
   * Rebuilds the account's sends from PostgreSQL's record (`sendTimes` in the last 24 hours,
   * `nextAt` the earliest next send) after Redis lost them. False when the lock is not held.
   */
  async rebuild(accountId: string, lockToken: string, nowMs: number, nextAt: number, sendTimes: number[]): Promise<boolean> {
    const k = this.keys;
    return this.scripts.run(
      paceSeedReplies,
      [k.accountSends(accountId), k.accountGap(accountId), k.accountLock(accountId)],
      [nowMs, lockToken, Math.ceil(nextAt), ...sendTimes],
    );
  }
}
