import type { RedisKeys } from './keys.js';
import { scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export const socketAcquireReplies = scriptReplies('socket-lease-acquire-3', {
  TAKEN: () => 'taken' as const,
  HANDED: () => 'handed' as const,
  HELD: () => 'held' as const,
  BUSY: () => 'busy' as const,
});
export const socketRenewReplies = scriptReplies('socket-lease-renew-2', {
  HELD: () => 'held' as const,
  HANDOVER: () => 'handover' as const,
  NOT_HOLDER: () => 'lost' as const,
});
export const socketReleaseReplies = scriptReplies('socket-lease-release-2', { OK: () => true, NOT_HOLDER: () => false });
export const socketPeekReplies = scriptReplies('socket-lease-peek-1', {
  HELD: () => 'mine' as const,
  BUSY: () => 'other' as const,
  FREE: () => 'free' as const,
});

/** The lease on an account's one live socket (WhatsApp closes the first of two with `connectionReplaced`): it lasts across jobs; others ask for a hand-over. */
export class SocketLeases {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
    private readonly handoverTtlMs = 30_000,
  ) {}

  /** `askHandover` false: a busy lease is left alone (no hand-over request). */
  /** 'handed': free since its last holder released it (socket closed), 'taken': free by expiry or never held. */
  async acquire(accountId: string, holder: string, ttlMs: number, askHandover = true): Promise<'taken' | 'handed' | 'held' | 'busy'> {
    const keys = [this.keys.socketLease(accountId), this.keys.socketHandover(accountId), this.keys.socketReleased(accountId)];
    return this.scripts.run(socketAcquireReplies, keys, [holder, ttlMs, this.handoverTtlMs, askHandover ? 1 : 0]);
  }

  async renew(accountId: string, holder: string, ttlMs: number): Promise<'held' | 'handover' | 'lost'> {
    return this.scripts.run(socketRenewReplies, [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)], [holder, ttlMs]);
  }

  async peek(accountId: string, holder: string): Promise<'mine' | 'other' | 'free'> {
    return this.scripts.run(socketPeekReplies, [this.keys.socketLease(accountId)], [holder]);
  }

  /** After the holder closed its socket: the next taker connects at once. */
  async release(accountId: string, holder: string): Promise<boolean> {
    return this.scripts.run(socketReleaseReplies, [this.keys.socketLease(accountId), this.keys.socketReleased(accountId)], [holder, this.handoverTtlMs]);
  }
}
