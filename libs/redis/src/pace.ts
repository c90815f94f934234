import type { RedisKeys } from './keys.js';
import { ChatLimits } from './chat-limits.js';
import { SafePace } from './safe-pace.js';
import { paceReserveManyReplies, paceReserveReplies } from './pace-replies.js';
import type { ChatPace, ManyReservation, PaceReservation } from './pace-types.js';
import type { ScriptCommands } from './scripts.js';

export type { ChatPace, ManyReservation, PaceReservation } from './pace-types.js';

/** Per-account send pace shared by every replica (GCRA in Redis; see lua/pace-reserve-3.lua). */
export class AccountPace {
  readonly safe: SafePace;
  readonly chats: ChatLimits;

  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {
    this.safe = new SafePace(scripts, keys);
    this.chats = new ChatLimits(scripts, keys);
  }

  /** Reserves the next slot of the account's pace (and the chat's when `chat.perMinute` > 0) at most `maxWaitMs` ahead, for the lock's holder. */
  async reserve(
    accountId: string,
    lockToken: string,
    nowMs: number,
    perMinute: number,
    burst: number,
    chat: ChatPace,
    maxWaitMs: number,
  ): Promise<PaceReservation> {
    return this.reserveSlot(accountId, lockToken, nowMs, 60_000 / perMinute, burst, chat, maxWaitMs);
  }

  /** Up to `count` consecutive slots, as `count` calls of `reserve` would, in one round trip. */
  async reserveMany(
    accountId: string,
    lockToken: string,
    nowMs: number,
    perMinute: number,
    burst: number,
    maxWaitMs: number,
    count: number,
  ): Promise<ManyReservation> {
    return this.scripts.run(
      paceReserveManyReplies,
      [this.keys.accountPace(accountId), this.keys.accountLock(accountId), this.keys.chatPace(accountId, '')],
      [nowMs, 60_000 / perMinute, burst, lockToken, 0, Math.min(maxWaitMs, Number.MAX_SAFE_INTEGER), count],
    );
  }

  /** A slot of the chat's pace only, for a send whose account slot was reserved before its chat was known. */
  async reserveChat(accountId: string, lockToken: string, nowMs: number, chat: ChatPace, maxWaitMs: number): Promise<PaceReservation> {
    return this.reserveSlot(accountId, lockToken, nowMs, 0, 1, chat, maxWaitMs);
  }

  private async reserveSlot(
    accountId: string,
    lockToken: string,
    nowMs: number,
    intervalMs: number,
    burst: number,
    chat: ChatPace,
    maxWaitMs: number,
  ): Promise<PaceReservation> {
    return this.scripts.run(
      paceReserveReplies,
      [this.keys.accountPace(accountId), this.keys.accountLock(accountId), this.keys.chatPace(accountId, chat.chatId)],
      [nowMs, intervalMs, burst, lockToken, chat.perMinute > 0 ? 60_000 / chat.perMinute : 0, Math.min(maxWaitMs, Number.MAX_SAFE_INTEGER)],
    );
  }
}
