import { randomUUID } from 'node:crypto';
import type { RedisKeys } from './keys.js';
import { scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export type LockResult = { held: true; token: string } | { held: false; retryInMs: number };

/** lock-acquire-1: taken, or the ms until the other holder's lock expires */
export const lockAcquireReplies = scriptReplies<{ taken: true } | { taken: false; retryInMs: number }>('lock-acquire-1', {
  TAKEN: () => ({ taken: true }),
  BUSY: (ms) => ({ taken: false, retryInMs: ms }),
});
/** lock-extend-1: true when the token held the lock */
export const lockExtendReplies = scriptReplies('lock-extend-1', { OK: () => true, NOT_HOLDER: () => false });
/** lock-release-settle-3: true when the token held the lock */
export const lockReleaseSettleReplies = scriptReplies('lock-release-settle-3', { OK: () => true, NOT_HOLDER: () => false });

/**
 * What a job leaves its account's next job as it releases the lock: the earliest moment the
 * next send may go by the pace and by the human gap (ms since the epoch; 0: as reserved).
 */
export interface PaceFloors {
  paceMs: number;
  gapMs: number;
}

/**
 * The per-account lock: one fan-out per account at a time across every sender replica.
 * The token doubles as the fencing token: target leases and pace tokens name it, so a holder
 * that lost the lock can neither send nor write results.
 */
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

  /** False when the lock was lost (expired and maybe taken by another holder). */
  async extend(accountId: string, token: string, ttlMs: number): Promise<boolean> {
    return this.scripts.run(lockExtendReplies, [this.keys.accountLock(accountId)], [token, ttlMs]);
  }

  /**
   * Gives the lock up if `token` holds it, in the same call moving the account's pace and human
   * gap to no earlier than `settle`'s floors, as of `settle.nowMs` (whether or not the lock was
   * still held: see lua/lock-release-settle-3.lua). False when the token did not hold the lock.
   */
  async release(accountId: string, token: string, settle: PaceFloors & { nowMs: number } = { nowMs: 0, paceMs: 0, gapMs: 0 }): Promise<boolean> {
    const k = this.keys;
    return this.scripts.run(
      lockReleaseSettleReplies,
      [k.accountLock(accountId), k.accountPace(accountId), k.accountGap(accountId)],
      [token, settle.nowMs, Math.ceil(settle.paceMs), Math.ceil(settle.gapMs)],
    );
  }
}
