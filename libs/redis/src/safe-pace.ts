import type { RedisKeys } from './keys.js';
import type { ChatPace, SafeReservation } from './pace-types.js';
import { paceSeedReplies, safeReserveReplies } from './pace-replies.js';
import type { ScriptCommands } from './scripts.js';

export interface SafeLimits {
  gapAfterMs: number;
  hourlyCap: number;
  dailyCap: number;
}

export type { SafeReservation } from './pace-types.js';

let sequence = 0;

/** The pace of accounts with human pacing or caps (lua/pace-reserve-safe-6.lua), still one round trip per send. */
export class SafePace {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

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

  /** Rebuilds the account's sends of the last 24 h from PostgreSQL after Redis lost them; false when the lock is not held. */
  async rebuild(accountId: string, lockToken: string, nowMs: number, nextAt: number, sendTimes: number[]): Promise<boolean> {
    const k = this.keys;
    return this.scripts.run(
      paceSeedReplies,
      [k.accountSends(accountId), k.accountGap(accountId), k.accountLock(accountId)],
      [nowMs, lockToken, Math.ceil(nextAt), ...sendTimes],
    );
  }
}
