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

/**
 * The lease on an account's one live messaging socket (WhatsApp: a second connection of the
 * same linked device makes the server close the first with `connectionReplaced`). Unlike the
 * account lock, which lasts one job, it lasts as long as the socket stays open, across jobs;
 * another replica that needs the socket asks for a hand-over instead of taking it.
 */
export class SocketLeases {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
    /** how long a hand-over request waits for its asker to come back, ms */
    private readonly handoverTtlMs = 30_000,
  ) {}

  /** 'taken' or 'held' when `holder` has the lease now; 'busy' when another has it (a hand-over is asked). */
  async acquire(accountId: string, holder: string, ttlMs: number): Promise<'taken' | 'held' | 'busy'> {
    return this.scripts.run(socketAcquireReplies, [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)], [holder, ttlMs, this.handoverTtlMs]);
  }

  /** 'handover' when another holder asked for the socket; 'lost' when the lease is no longer ours. */
  async renew(accountId: string, holder: string, ttlMs: number): Promise<'held' | 'handover' | 'lost'> {
    return this.scripts.run(socketRenewReplies, [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)], [holder, ttlMs]);
  }

  /** Who holds the lease, as seen by `holder`, without asking for a hand-over. */
  async peek(accountId: string, holder: string): Promise<'mine' | 'other' | 'free'> {
    return this.scripts.run(socketPeekReplies, [this.keys.socketLease(accountId)], [holder]);
  }

  async release(accountId: string, holder: string): Promise<boolean> {
    return this.scripts.run(releaseReplies, [this.keys.socketLease(accountId)], [holder]);
  }
}
