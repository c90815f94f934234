import type { RedisKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';

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
    const r = await this.scripts.run('socket-lease-acquire-2', [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)], [holder, ttlMs, this.handoverTtlMs]);
    return r === 1 ? 'taken' : r === 2 ? 'held' : 'busy';
  }

  /** 'handover' when another holder asked for the socket; 'lost' when the lease is no longer ours. */
  async renew(accountId: string, holder: string, ttlMs: number): Promise<'held' | 'handover' | 'lost'> {
    const r = await this.scripts.run('socket-lease-renew-2', [this.keys.socketLease(accountId), this.keys.socketHandover(accountId)], [holder, ttlMs]);
    return r === 1 ? 'held' : r === 2 ? 'handover' : 'lost';
  }

  /** Who holds the lease, as seen by `holder`, without asking for a hand-over. */
  async peek(accountId: string, holder: string): Promise<'mine' | 'other' | 'free'> {
    const r = await this.scripts.run('socket-lease-peek-1', [this.keys.socketLease(accountId)], [holder]);
    return r === 2 ? 'mine' : r === 1 ? 'other' : 'free';
  }

  async release(accountId: string, holder: string): Promise<boolean> {
    return (await this.scripts.run('socket-lease-release-1', [this.keys.socketLease(accountId)], [holder])) === 1;
  }
}
