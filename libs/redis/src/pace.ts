import type { RedisKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';

export type PaceResult = { granted: true } | { granted: false; waitMs: number } | { granted: false; lockLost: true };

/** Per-account send pace shared by every replica (GCRA in Redis; see lua/pace-take-2.lua). */
export class AccountPace {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

  /** Takes one send token at `nowMs` for the holder of the account lock `lockToken`. */
  async take(accountId: string, lockToken: string, nowMs: number, perMinute: number, burst: number): Promise<PaceResult> {
    const interval = 60_000 / perMinute;
    const result = await this.scripts.run(
      'pace-take-2',
      [this.keys.accountPace(accountId), this.keys.accountLock(accountId)],
      [nowMs, interval, burst, lockToken],
    );
    if (result === -1) return { granted: false, lockLost: true };
    if (result === 0) return { granted: true };
    return { granted: false, waitMs: result };
  }
}
