import type { RedisKeys } from './keys.js';
import { releaseReplies, scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export const leaseHoldReplies = scriptReplies('lease-hold-1', { TAKEN: () => 'taken' as const, HELD: () => 'held' as const, BUSY: () => 'lost' as const });

/** The scheduler's leader lease: whoever holds it runs the ticks; the others stand by. */
export class LeaderLease {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
    private readonly holderId: string,
  ) {}

  async hold(ttlMs: number): Promise<'taken' | 'held' | 'lost'> {
    return this.scripts.run(leaseHoldReplies, [this.keys.schedulerLeader], [this.holderId, ttlMs]);
  }

  async drop(): Promise<void> {
    await this.scripts.run(releaseReplies, [this.keys.schedulerLeader], [this.holderId]);
  }
}
