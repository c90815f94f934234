import type { RedisKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';

/** The scheduler's leader lease: whoever holds it runs the ticks; the others stand by. */
export class LeaderLease {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
    private readonly holderId: string,
  ) {}

  /** 'taken' when this holder just became leader, 'held' when it still is, 'lost' when another holds it. */
  async hold(ttlMs: number): Promise<'taken' | 'held' | 'lost'> {
    const result = await this.scripts.run('lease-hold-1', [this.keys.schedulerLeader], [this.holderId, ttlMs]);
    return result === 1 ? 'taken' : result === 2 ? 'held' : 'lost';
  }

  async drop(): Promise<void> {
    await this.scripts.run('lease-drop-1', [this.keys.schedulerLeader], [this.holderId]);
  }
}
