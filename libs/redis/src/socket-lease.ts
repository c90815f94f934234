import type { RedisKeys } from './keys.js';
import { releaseReplies, scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export const socketAcquireReplies = scriptReplies('socket-lease-acquire-2', {
  TAKEN: () => 'taken' as const,
  HELD: () => 'held' as const,
  BUSY: () => 'busy' as const,
});
export const socketRenewReplies = scriptReplies('socket-lease-renew-2', {
  HELD: () => 'held' as const,
  HANDOVER: () => 'handover' as const,
  NOT_HOLDER: () => 'lost' as const,
});
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
  async acquire(accountId: string, holder: string, ttlMs: number, askHandover = true): Promise<'taken' | 'held' | 'busy'> {
    const keys = [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)];
    return this.scripts.run(socketAcquireReplies, keys, [holder, ttlMs, this.handoverTtlMs, askHandover ? 1 : 0]);
  }

  async renew(accountId: string, holder: string, ttlMs: number): Promise<'held' | 'handover' | 'lost'> {
    return this.scripts.run(socketRenewReplies, [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)], [holder, ttlMs]);
  }

  async peek(accountId: string, holder: string): Promise<'mine' | 'other' | 'free'> {
    return this.scripts.run(socketPeekReplies, [this.keys.socketLease(accountId)], [holder]);
  }

  async release(accountId: string, holder: string): Promise<boolean> {
    return this.scripts.run(releaseReplies, [this.keys.socketLease(accountId)], [holder]);
  }
}
