import type { RedisKeys } from './keys.js';
import { scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export const rateLimitReplies = scriptReplies('rate-limit-1', { OK: () => 0, LIMITED: (ms) => ms });

export type PairRefusal = { limit: 'first' | 'second'; waitMs: number } | null;

export const rateLimitPairReplies = scriptReplies<PairRefusal>('rate-limit-2', {
  OK: () => null,
  LIMITED: (ms, [which]) => ({ limit: which === 1 ? 'first' : 'second', waitMs: ms }),
});

export interface PairedLimit {
  key: string;
  perMinute: number;
  /** false: the request is refused while the limit is spent out, but spends nothing of it */
  spend: boolean;
}

/** A per-key request limit shared by every replica: GCRA with a minute's allowance as burst, so no window boundary lets twice the limit through. */
export class SharedRateLimit {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

  take(key: string, now: number, perMinute: number): Promise<number> {
    const interval = 60_000 / perMinute;
    return this.scripts.run(rateLimitReplies, [this.keys.rateLimit(key)], [now, interval, 60_000 - interval]);
  }

  /** Takes one request from both limits, or from neither when either is spent out. */
  takeBoth(first: PairedLimit, second: Omit<PairedLimit, 'spend'>, now: number): Promise<PairRefusal> {
    const a = 60_000 / first.perMinute;
    const b = 60_000 / second.perMinute;
    return this.scripts.run(
      rateLimitPairReplies,
      [this.keys.rateLimit(first.key), this.keys.rateLimit(second.key)],
      [now, a, 60_000 - a, first.spend ? 1 : 0, b, 60_000 - b],
    );
  }

  /** Gives back one request taken from `key` (e.g. for a token that proved valid); more than was taken is harmless, capped at a minute's allowance. */
  giveBack(key: string, now: number, perMinute: number): Promise<number> {
    const interval = 60_000 / perMinute;
    return this.scripts.run(rateLimitReplies, [this.keys.rateLimit(key)], [now, -interval, Number.MAX_SAFE_INTEGER]);
  }
}
