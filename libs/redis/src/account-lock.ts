import { randomUUID } from 'node:crypto';
import type { RedisKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';

export type LockResult = { held: true; token: string } | { held: false; retryInMs: number };

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
    const result = await this.scripts.run('lock-acquire-1', [this.keys.accountLock(accountId)], [token, ttlMs]);
    return result === 1 ? { held: true, token } : { held: false, retryInMs: -result - 1 };
  }

  /** False when the lock was lost (expired and maybe taken by another holder). */
  async extend(accountId: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.scripts.run('lock-extend-1', [this.keys.accountLock(accountId)], [token, ttlMs])) === 1;
  }

  async release(accountId: string, token: string): Promise<boolean> {
    return (await this.scripts.run('lock-release-1', [this.keys.accountLock(accountId)], [token])) === 1;
  }
}
