import { randomUUID } from 'node:crypto';
import type { RedisKeys } from './keys.js';
import { scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export type LockResult = { held: true; token: string } | { held: false; retryInMs: number };

export const lockAcquireReplies = scriptReplies<{ taken: true } | { taken: false; retryInMs: number }>('lock-acquire-1', {
  TAKEN: () => ({ taken: true }),
  BUSY: (ms) => ({ taken: false, retryInMs: ms }),
});
export const lockExtendReplies = scriptReplies('lock-extend-1', { OK: () => true, NOT_HOLDER: () => false });
export const lockReleaseSettleReplies = scriptReplies('lock-release-settle-3', { OK: () => true, NOT_HOLDER: () => false });

/** What a released job leaves the next: the earliest next send by pace and by human gap, ms since the epoch (0: as reserved). */
export interface PaceFloors {
  paceMs: number;
  gapMs: number;
}

/** One fan-out per account across replicas. The token fences: leases and pace tokens name it, so a holder that lost the lock can neither send nor write. */
export class AccountLock {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

  async acquire(accountId: string, ttlMs: number): Promise<LockResult> {
    const token = randomUUID();
    const result = await this.scripts.run(lockAcquireReplies, [this.keys.accountLock(accountId)], [token, ttlMs]);
    return result.taken ? { held: true, token } : { held: false, retryInMs: result.retryInMs };
  }

  async extend(accountId: string, token: string, ttlMs: number): Promise<boolean> {
    return this.scripts.run(lockExtendReplies, [this.keys.accountLock(accountId)], [token, ttlMs]);
  }

  /** Gives the lock up if `token` holds it, moving the pace and gap to at least `settle`'s floors either way (lua/lock-release-settle-3.lua). */
  async release(accountId: string, token: string, settle: PaceFloors & { nowMs: number } = { nowMs: 0, paceMs: 0, gapMs: 0 }): Promise<boolean> {
    const k = this.keys;
    return this.scripts.run(
      lockReleaseSettleReplies,
      [k.accountLock(accountId), k.accountPace(accountId), k.accountGap(accountId)],
      [token, settle.nowMs, Math.ceil(settle.paceMs), Math.ceil(settle.gapMs)],
    );
  }
}
